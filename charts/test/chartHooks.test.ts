// The chart's hooks, rendered by a real Helm and then run: each hook Job's containers execute the gateway command
// they name, with exactly the arguments rendered, against the Kubernetes API stand-in that authorizes them by the
// rules of the Role the hook renders. So the Role is checked to be enough (and the stand-in refuses anything else),
// the arguments to parse, and the result to be what the workloads read.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { startRedisServer, type LocalRedis } from '@frequency-gateway/devstack';
import { layoutKey, runEnsureSecretCommand, runKeepReplicasCommand } from '@frequency-gateway/platform';
import { Redis } from 'ioredis';
import { KubernetesApiStandIn, type PolicyRule } from '@frequency-gateway/devstack/kubernetes';
import { COMPONENTS } from '@frequency-gateway/tools/components';
import { chartHelm, hooksOf, named, NAMESPACE, PREFIX, REQUIRED } from './chartRendering.js';
import { podSpec, workloads, type K8sObject } from './support/kubernetesObjects.js';

const { render } = chartHelm();
const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));
/** `gateway <args>` as a process, with exactly `env` besides what Node needs to run. */
const runGateway = (args: string[], env: Record<string, string>) =>
  promisify(execFile)(process.execPath, ['--conditions=source', '--import', 'tsx', 'bin/gateway.js', ...args], {
    cwd: repositoryRoot,
    env: { PATH: process.env.PATH ?? '', ...env },
  });
const api = new KubernetesApiStandIn();
const scratch = mkdtempSync(join(tmpdir(), 'chart-hooks-'));
beforeAll(async () => writeFileSync(join(scratch, 'kubeconfig'), (await api.start()).exportConfig()));
afterAll(async () => (await api.stop(), rmSync(scratch, { recursive: true, force: true })));

/**
 * Runs one hook container's command as its pod would (`gateway <args>` with $(POD_NAMESPACE) expanded), with the
 * stand-in as its API server; resolves with its exit code and output.
 */
async function runContainer(container: IContainer) {
  const args = (container.args ?? []).map((arg) => arg.replace('$(POD_NAMESPACE)', NAMESPACE));
  const lines: string[] = [];
  const output = { out: (line: string) => lines.push(line), err: (line: string) => lines.push(line) };
  const previous = process.env.KUBECONFIG;
  process.env.KUBECONFIG = join(scratch, 'kubeconfig');
  try {
    const [command, ...rest] = args;
    const run = { 'ensure-secret': runEnsureSecretCommand, 'keep-replicas': runKeepReplicasCommand }[command!];
    if (!run) throw new Error(`the hook runs an unknown command: ${command}`);
    return { code: await run(rest, output), lines };
  } finally {
    if (previous === undefined) delete process.env.KUBECONFIG;
    else process.env.KUBECONFIG = previous;
  }
}

/** A hook's objects, checked for what makes Helm (and Argo CD) run it in order and clean it up. */
function hookParts(objects: K8sObject[], event: string, component: string) {
  const parts = hooksOf(objects, event).filter((o) => o.metadata.labels?.['app.kubernetes.io/component'] === component);
  const weight = (o: K8sObject) => Number(o.metadata.annotations!['helm.sh/hook-weight']);
  const job = parts.find((o) => o.kind === 'Job')!;
  for (const part of parts) {
    expect(part.metadata.annotations!['helm.sh/hook-delete-policy']).toBe('before-hook-creation,hook-succeeded');
    if (part !== job) expect(weight(part)).toBeLessThan(weight(job));
  }
  expect(parts.map((o) => o.kind).sort()).toEqual(['Job', 'NetworkPolicy', 'Role', 'RoleBinding', 'ServiceAccount']);
  const role = parts.find((o) => o.kind === 'Role')! as K8sObject & { rules: PolicyRule[] };
  const binding = parts.find((o) => o.kind === 'RoleBinding')! as K8sObject & {
    roleRef: { name: string };
    subjects: { name: string }[];
  };
  expect(binding.roleRef.name).toBe(role.metadata.name);
  expect(binding.subjects.map((s) => s.name)).toEqual([podSpec(job).serviceAccountName]);
  return { job, rules: role.rules, containers: podSpec(job).containers };
}

const decoded = (data: Record<string, string> = {}) =>
  Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));

describe('the secrets hook', () => {
  beforeEach(() => api.secrets.clear());

  it('creates, with no more than its Role allows, every generated key the workloads read, and keeps them on upgrade', async () => {
    const install = await render({ ...REQUIRED, secrets: { values: { PROVIDER_ACCOUNT_SEED_PHRASE: '//Alice' } } });
    const { rules, containers } = hookParts(install, 'pre-install', 'secrets-hook');
    const secretsJobs = (event: string) =>
      hooksOf(install, event).filter(
        (o) => o.kind === 'Job' && o.metadata.labels?.['app.kubernetes.io/component'] === 'secrets-hook',
      );
    expect(secretsJobs('pre-upgrade')).toEqual(secretsJobs('pre-install'));
    api.secretsAccess = rules;
    for (const container of containers) expect(await runContainer(container)).toMatchObject({ code: 0 });

    const stored = (name: string) => api.secrets.get(`${NAMESPACE}/${name}`);
    const resolves = (objects: K8sObject[]) => {
      const refs = workloads(objects).flatMap((w) =>
        podSpec(w).containers.flatMap((c) => (c.env ?? []).flatMap((e) => e.valueFrom?.secretKeyRef ?? [])),
      );
      const generated = refs.filter((ref) => ref.name!.endsWith('-generated'));
      expect(generated.length).toBeGreaterThan(6);
      for (const ref of generated)
        expect(`${ref.name}/${ref.key}: ${stored(ref.name!)?.data?.[ref.key] !== undefined}`).toBe(
          `${ref.name}/${ref.key}: true`,
        );
    };
    resolves(install);
    const first = decoded(stored(`${PREFIX}-generated`)!.data);
    expect(first.QUEUES_BASIC_AUTH).toMatch(/^admin:[0-9a-f]{64}$/);
    expect(decoded(stored('gw-redis-generated')!.data)['redis-password']).toMatch(/^[0-9a-f]{64}$/);
    expect(stored(`${PREFIX}-generated`)!.metadata.labels).toEqual({
      'app.kubernetes.io/name': 'frequency-gateway',
      'app.kubernetes.io/instance': 'gw',
      'app.kubernetes.io/part-of': 'frequency-gateway',
      'app.kubernetes.io/component': 'generated-secrets',
    });

    // An upgrade that turns api tokens on: the same hook adds the key, every other value stays.
    const upgrade = await render({
      ...REQUIRED,
      secrets: { values: { PROVIDER_ACCOUNT_SEED_PHRASE: '//Alice' } },
      apiTokens: { enabled: true },
    });
    const next = hookParts(upgrade, 'pre-upgrade', 'secrets-hook');
    api.secretsAccess = next.rules;
    for (const container of next.containers) expect(await runContainer(container)).toMatchObject({ code: 0 });
    resolves(upgrade);
    expect(decoded(stored(`${PREFIX}-generated`)!.data)).toEqual({
      ...first,
      API_TOKENS: expect.stringMatching(/^gateway:[0-9a-f]{64}$/),
    });
  });

  it('may read no Secret but the ones it fills, and create Secrets (RBAC cannot limit a create by name)', async () => {
    const { rules } = hookParts(await render(REQUIRED), 'pre-install', 'secrets-hook');
    expect(rules).toEqual([
      {
        apiGroups: [''],
        resources: ['secrets'],
        resourceNames: [`${PREFIX}-generated`, 'gw-redis-generated'],
        verbs: ['get', 'patch'],
      },
      { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
    ]);
  });

  it('is a new Job whenever its pod changes (a Job pod is immutable), and the same one otherwise', async () => {
    const jobName = async (values: object) =>
      hooksOf(await render(values), 'pre-install').find((o) => o.kind === 'Job')!.metadata.name;
    const a = await jobName(REQUIRED);
    expect(a).toMatch(new RegExp(`^${PREFIX}-secrets-[0-9a-f]{8}$`));
    expect(await jobName({ ...REQUIRED, image: { tag: '0.2.0' } })).not.toBe(a);
    expect(await jobName({ ...REQUIRED, componentDefaults: { config: { LOG_LEVEL: 'debug' } } })).toBe(a);
  });
});

describe('the replicas hook', () => {
  beforeEach(() => (api.deployments.clear(), api.replicasOwners.clear()));

  it('exists only when a component autoscales, runs before upgrades only, and may touch only the autoscaled Deployments', async () => {
    expect(
      hooksOf(await render(REQUIRED), 'pre-upgrade').filter(
        (o) => o.metadata.labels?.['app.kubernetes.io/component'] === 'replicas-hook',
      ),
    ).toEqual([]);
    const objects = await render({
      ...REQUIRED,
      contentPublishing: { enabled: true, worker: { autoscaling: { enabled: true } } },
    });
    const { rules } = hookParts(objects, 'pre-upgrade', 'replicas-hook');
    expect(
      hooksOf(objects, 'pre-install').some(
        (o) => o.metadata.labels?.['app.kubernetes.io/component'] === 'replicas-hook',
      ),
    ).toBe(false);
    expect(rules).toEqual([
      {
        apiGroups: ['apps'],
        resources: ['deployments'],
        resourceNames: [`${PREFIX}-content-publishing-worker`],
        verbs: ['get', 'patch'],
      },
    ]);
  });

  it('keeps every replica count when an upgrade turns autoscaling on, which Helm would otherwise reset to 1', async () => {
    // The release as installed: every Deployment's count applied by Helm, its only owner.
    const before = await render(REQUIRED);
    const counts = Object.fromEntries(
      COMPONENTS.map((c) => [
        `${PREFIX}-${c.name}`,
        named(before, 'Deployment', `${PREFIX}-${c.name}`)!.spec.replicas as number,
      ]),
    );
    for (const [name, replicas] of Object.entries(counts)) api.addDeployment(NAMESPACE, name, replicas, 'helm');
    expect(Object.values(counts)).toContain(2);

    const upgrade = await render({ ...REQUIRED, componentDefaults: { autoscaling: { enabled: true } } });
    const { rules, containers } = hookParts(upgrade, 'pre-upgrade', 'replicas-hook');
    api.deploymentsAccess = rules;
    for (const container of containers) expect(await runContainer(container)).toMatchObject({ code: 0 });
    // Then Helm applies the upgrade's Deployments, which leave spec.replicas out.
    for (const name of Object.keys(counts)) {
      expect(named(upgrade, 'Deployment', name)!.spec.replicas).toBeUndefined();
      expect(api.applyManifest(NAMESPACE, name, 'helm', undefined)[0]).toBe(200);
    }
    const after = Object.fromEntries(
      Object.keys(counts).map((name) => [name, api.deployments.get(`${NAMESPACE}/${name}`)!.spec.replicas]),
    );
    expect(after).toEqual(counts);
  });
});

describe('the migrate hook', () => {
  const PASSWORD = 'migrate-hook-test';
  let server: LocalRedis;
  let redis: Redis;
  beforeAll(async () => {
    server = await startRedisServer({ args: ['--requirepass', PASSWORD] });
    redis = new Redis(server.url, { password: PASSWORD });
  });
  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });

  /** A container's environment as its pod gets it: values, and Secret keys read from the rendered Secrets. */
  function environmentOf(container: IContainer, objects: K8sObject[]): Record<string, string> {
    const env: Record<string, string> = {};
    for (const entry of container.env ?? []) {
      const ref = entry.valueFrom?.secretKeyRef;
      if (!ref) {
        env[entry.name] = entry.value ?? '';
        continue;
      }
      const secret = named(objects, 'Secret', ref.name!) as
        (K8sObject & { stringData?: Record<string, string>; data?: Record<string, string> }) | undefined;
      const value = secret?.stringData?.[ref.key] ?? decoded(secret?.data)[ref.key];
      if (value === undefined)
        throw new Error(`${container.name}: ${entry.name} from ${ref.name}/${ref.key}, which is not rendered`);
      env[entry.name] = value;
    }
    return env;
  }

  it("runs before upgrades only, one container per service, each bringing its keyspace to this version's layout with the values' Redis settings alone", async () => {
    const values = {
      ...REQUIRED,
      redis: { enabled: false },
      externalRedis: { url: `redis://127.0.0.1:${server.port}/0`, password: PASSWORD },
      contentWatcher: { config: { CACHE_KEY_PREFIX: 'watcher-a' } },
    };
    const objects = await render(values);
    const parts = objects.filter((o) => o.metadata.labels?.['app.kubernetes.io/component'] === 'migrate-hook');
    expect(parts.map((o) => `${o.kind} ${o.metadata.annotations!['helm.sh/hook']}`).sort()).toEqual([
      'Job pre-upgrade',
      'NetworkPolicy pre-upgrade',
    ]);
    // Argo CD would run it on the first sync too, before Redis exists.
    for (const part of parts) expect(part.metadata.annotations!['argocd.argoproj.io/hook']).toBe('Skip');
    const job = parts.find((o) => o.kind === 'Job')!;
    const secretsJob = hooksOf(objects, 'pre-upgrade').find(
      (o) => o.kind === 'Job' && o.metadata.labels?.['app.kubernetes.io/component'] === 'secrets-hook',
    );
    if (secretsJob)
      expect(Number(job.metadata.annotations!['helm.sh/hook-weight'])).toBeGreaterThan(
        Number(secretsJob.metadata.annotations!['helm.sh/hook-weight']),
      );
    const pod = podSpec(job);
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.containers.map((c) => [c.name, c.args])).toEqual([
      ['account', ['account', 'migrate']],
      ['content-publishing', ['content-publishing', 'migrate']],
      ['content-watcher', ['content-watcher', 'migrate']],
    ]);

    // The ConfigMaps are the previous release's at pre-upgrade: nothing comes from them.
    for (const container of pod.containers) expect(JSON.stringify(container)).not.toMatch(/configMap/);
    const runs = await Promise.all(
      pod.containers.map((container) => runGateway(container.args!, environmentOf(container, objects))),
    );
    expect(runs.map((run) => run.stdout)).toEqual([
      '{account}: layout 1, nothing to migrate\n',
      '{content-publishing}: layout 1, nothing to migrate\n',
      '{watcher-a}: layout 1, nothing to migrate\n',
    ]);
    expect(
      await redis.mget(layoutKey('{account}'), layoutKey('{content-publishing}'), layoutKey('{watcher-a}')),
    ).toEqual(['1', '1', '1']);
  }, 120_000);

  it('is not rendered when turned off', async () => {
    const objects = await render({ ...REQUIRED, hooks: { migrate: { enabled: false } } });
    expect(objects.filter((o) => o.metadata.labels?.['app.kubernetes.io/component'] === 'migrate-hook')).toEqual([]);
  });
});
