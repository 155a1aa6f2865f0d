import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { KubeConfig } from '@kubernetes/client-node';
import { ensureSecret, parseEnsureSecretArguments, type GeneratedKey } from '../src/index.js';
import { KubernetesApiStandIn, type PolicyRule, type StoredSecret } from '@frequency-gateway/devstack/kubernetes';

const NAMESPACE = 'gateway';
const NAME = 'gw-generated';
const KEYS: GeneratedKey[] = [
  { name: 'REDIS_PASSWORD', prefix: '' },
  { name: 'QUEUES_BASIC_AUTH', prefix: 'admin:' },
];

/** What a Role for this command grants: get and patch on the one Secret by name, create on secrets. */
const ROLE: PolicyRule[] = [
  { apiGroups: [''], resources: ['secrets'], resourceNames: [NAME], verbs: ['get', 'patch'] },
  { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
];

const decoded = (secret: StoredSecret | undefined) =>
  Object.fromEntries(Object.entries(secret?.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));

describe('ensureSecret against a stand-in of the API server', () => {
  const api = new KubernetesApiStandIn();
  let kubeConfig: KubeConfig;
  const stored = () => api.secrets.get(`${NAMESPACE}/${NAME}`);
  const run = (keys = KEYS, labels?: Record<string, string>) =>
    ensureSecret({ kubeConfig, namespace: NAMESPACE, name: NAME, keys, ...(labels ? { labels } : {}) });

  beforeAll(async () => (kubeConfig = await api.start()));
  afterAll(async () => api.stop());
  beforeEach(() => {
    api.secrets.clear();
    api.secretRequests.length = 0;
    api.secretsAccess = ROLE;
    delete api.onSecretRequest;
  });

  it('creates a missing Secret with a random value per key, after its prefix, and the labels given', async () => {
    const outcome = await run(KEYS, { 'app.kubernetes.io/instance': 'gw' });
    expect(outcome).toEqual({ action: 'created', added: ['REDIS_PASSWORD', 'QUEUES_BASIC_AUTH'], kept: [] });
    const values = decoded(stored());
    expect(values.REDIS_PASSWORD).toMatch(/^[0-9a-f]{64}$/);
    expect(values.QUEUES_BASIC_AUTH).toMatch(/^admin:[0-9a-f]{64}$/);
    expect(stored()).toMatchObject({ type: 'Opaque', metadata: { labels: { 'app.kubernetes.io/instance': 'gw' } } });
    expect(api.secretRequests).toEqual([{ verb: 'get', name: NAME }, { verb: 'create' }]);
    // Another Secret made the same way gets other values.
    api.secrets.clear();
    await run();
    expect(decoded(stored()).REDIS_PASSWORD).not.toBe(values.REDIS_PASSWORD);
  });

  it('changes nothing in a Secret that has every key: one read, no write', async () => {
    await run();
    const before = structuredClone(stored());
    api.secretRequests.length = 0;
    expect(await run()).toEqual({ action: 'unchanged', added: [], kept: ['REDIS_PASSWORD', 'QUEUES_BASIC_AUTH'] });
    expect(stored()).toEqual(before);
    expect(api.secretRequests).toEqual([{ verb: 'get', name: NAME }]);
  });

  it('adds only the keys a Secret lacks, keeping the values and keys it has', async () => {
    await run([{ name: 'REDIS_PASSWORD', prefix: '' }]);
    const secret = stored()!;
    secret.data = { ...secret.data, THEIRS: Buffer.from('kept as it is').toString('base64') };
    const before = decoded(secret);
    expect(await run()).toEqual({ action: 'completed', added: ['QUEUES_BASIC_AUTH'], kept: ['REDIS_PASSWORD'] });
    const after = decoded(stored());
    expect(after).toMatchObject({ REDIS_PASSWORD: before.REDIS_PASSWORD, THEIRS: 'kept as it is' });
    expect(after.QUEUES_BASIC_AUTH).toMatch(/^admin:[0-9a-f]{64}$/);
    expect(api.secretRequests.at(-1)).toEqual({ verb: 'patch', name: NAME });
  });

  it('completes a Secret another writer created between its read and its create, without replacing a value', async () => {
    api.onSecretRequest = ({ verb }) => {
      if (verb !== 'create' || stored()) return;
      api.secrets.set(`${NAMESPACE}/${NAME}`, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: NAME, namespace: NAMESPACE, uid: 'u', resourceVersion: '900', creationTimestamp: 'now' },
        type: 'Opaque',
        data: { REDIS_PASSWORD: Buffer.from('the other writer').toString('base64') },
      });
    };
    expect(await run()).toEqual({ action: 'completed', added: ['QUEUES_BASIC_AUTH'], kept: ['REDIS_PASSWORD'] });
    expect(decoded(stored()).REDIS_PASSWORD).toBe('the other writer');
    expect(api.secretRequests.map((r) => r.verb)).toEqual(['get', 'create', 'get', 'patch']);
  });

  it('reads again when its patch meets a newer version, and keeps a key the other writer added meanwhile', async () => {
    await run([{ name: 'REDIS_PASSWORD', prefix: '' }]);
    api.onSecretRequest = ({ verb }) => {
      const secret = stored()!;
      if (verb !== 'patch' || secret.data?.QUEUES_BASIC_AUTH) return;
      secret.data = { ...secret.data, QUEUES_BASIC_AUTH: Buffer.from('admin:theirs').toString('base64') };
      secret.metadata.resourceVersion = '901';
    };
    expect(await run()).toEqual({ action: 'unchanged', added: [], kept: ['REDIS_PASSWORD', 'QUEUES_BASIC_AUTH'] });
    expect(decoded(stored()).QUEUES_BASIC_AUTH).toBe('admin:theirs');
    expect(api.secretRequests.slice(2).map((r) => r.verb)).toEqual(['get', 'patch', 'get']);
  });

  it('needs no more than the Role grants: get and patch by name, create (which RBAC cannot limit by name)', async () => {
    await run();
    api.secretsAccess = ROLE.filter((rule) => !rule.verbs.includes('create'));
    api.secrets.clear();
    await expect(run()).rejects.toThrow(
      `cannot create Secret gateway/gw-generated: the API server answered 403 Forbidden: secrets is forbidden: User "system:serviceaccount:gateway:tester" cannot create resource "secrets"`,
    );
    api.secretsAccess = [{ ...ROLE[0]!, resourceNames: ['another-secret'] }, ROLE[1]!];
    await expect(run()).rejects.toThrow(
      'cannot read Secret gateway/gw-generated: the API server answered 403 Forbidden',
    );
  });

  it('refuses to touch an immutable Secret that lacks keys, and names them', async () => {
    await run([{ name: 'REDIS_PASSWORD', prefix: '' }]);
    stored()!.immutable = true;
    await expect(run()).rejects.toThrow('Secret gateway/gw-generated is immutable and lacks QUEUES_BASIC_AUTH');
  });

  it('refuses a key the API server would refuse, before asking it', async () => {
    await expect(run([{ name: 'NOT A KEY', prefix: '' }])).rejects.toThrow('key "NOT A KEY" is not a Secret key');
    expect(api.secretRequests).toEqual([]);
  });
});

describe('the ensure-secret command', () => {
  it('parses repeated keys with prefixes and labels, and names every problem of bad arguments', () => {
    expect(
      parseEnsureSecretArguments([
        '--name',
        's',
        '--key',
        'A',
        '--key',
        'B=admin:',
        '--label',
        'a/b=c',
        '--namespace=n',
      ]),
    ).toEqual({
      name: 's',
      namespace: 'n',
      keys: [
        { name: 'A', prefix: '' },
        { name: 'B', prefix: 'admin:' },
      ],
      labels: { 'a/b': 'c' },
    });
    expect(parseEnsureSecretArguments(['--key', 'A', '--key', 'A', '--key', 'b c', '--label', 'x'])).toEqual({
      problems: [
        '--name: the Secret to ensure is required',
        "--key b c: a Secret key is letters, digits, '-', '_' or '.'",
        '--key A: given twice',
        '--label x: must be KEY=VALUE',
      ],
    });
    expect(parseEnsureSecretArguments(['--name', 's', '--keys', 'A'])).toEqual({
      problems: [expect.stringContaining("Unknown option '--keys'")],
    });
  });

  describe('as a process started through bin/gateway.js, with a kubeconfig', () => {
    const api = new KubernetesApiStandIn();
    const scratch = mkdtempSync(join(tmpdir(), 'ensure-secret-'));
    const kubeconfig = join(scratch, 'kubeconfig');
    const gateway = fileURLToPath(new URL('../../../bin/gateway.js', import.meta.url));
    beforeAll(async () => writeFileSync(kubeconfig, (await api.start()).exportConfig()));
    afterAll(async () => (await api.stop(), rmSync(scratch, { recursive: true, force: true })));

    /** Exit code and output, whatever the code. */
    async function command(args: string[]) {
      try {
        const { stdout, stderr } = await promisify(execFile)(
          process.execPath,
          ['--conditions=source', '--import', 'tsx', gateway, 'ensure-secret', ...args],
          { env: { ...process.env, KUBECONFIG: kubeconfig } },
        );
        return { code: 0, stdout, stderr };
      } catch (error) {
        const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string };
        return { code, stdout, stderr };
      }
    }

    it('creates the Secret, says which keys it generated and never prints a value; exits 1 when refused', async () => {
      api.secretsAccess = ROLE;
      const args = [
        '--namespace',
        NAMESPACE,
        '--name',
        NAME,
        '--key',
        'REDIS_PASSWORD',
        '--key',
        'QUEUES_BASIC_AUTH=admin:',
      ];
      const created = await command([...args, '--label', 'app.kubernetes.io/instance=gw']);
      expect(created).toEqual({
        code: 0,
        stdout: 'Secret gateway/gw-generated created with generated REDIS_PASSWORD, QUEUES_BASIC_AUTH\n',
        stderr: '',
      });
      const values = decoded(api.secrets.get(`${NAMESPACE}/${NAME}`));
      expect(values.QUEUES_BASIC_AUTH).toMatch(/^admin:[0-9a-f]{64}$/);

      const again = await command([...args, '--key', 'API_TOKENS']);
      expect(again.stdout).toBe(
        'Secret gateway/gw-generated: generated API_TOKENS; kept REDIS_PASSWORD, QUEUES_BASIC_AUTH as they were\n',
      );
      const after = decoded(api.secrets.get(`${NAMESPACE}/${NAME}`));
      for (const output of [created, again])
        for (const value of Object.values(after)) expect(output.stdout + output.stderr).not.toContain(value);
      expect(after).toMatchObject(values);

      api.secretsAccess = [];
      const refused = await command(args);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(
        /^ensure-secret: cannot read Secret gateway\/gw-generated: the API server answered 403/,
      );
    }, 120_000);

    it('exits 2 with the problems and its usage for wrong arguments', async () => {
      const { code, stderr } = await command(['--name', NAME]);
      expect(code).toBe(2);
      expect(stderr).toContain('ensure-secret: --key: at least one key is required\nusage: ensure-secret --name NAME');
    }, 60_000);
  });
});
