import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { KubeConfig } from '@kubernetes/client-node';
import { keepReplicas } from '../src/index.js';
import { KubernetesApiStandIn, type PolicyRule } from '@frequency-gateway/devstack/kubernetes';

const NAMESPACE = 'gateway';
const MANAGER = 'frequency-gateway-replicas';
const ROLE: PolicyRule[] = [
  { apiGroups: ['apps'], resources: ['deployments'], resourceNames: ['api', 'worker'], verbs: ['get', 'patch'] },
];

describe('keepReplicas against a stand-in of the API server', () => {
  const api = new KubernetesApiStandIn();
  let kubeConfig: KubeConfig;
  const replicas = (name: string) => api.deployments.get(`${NAMESPACE}/${name}`)?.spec.replicas;
  const owners = (name: string) => [...(api.replicasOwners.get(`${NAMESPACE}/${name}`)?.keys() ?? [])].sort();
  const keep = (deployments: string[]) =>
    keepReplicas({ kubeConfig, namespace: NAMESPACE, deployments, fieldManager: MANAGER });

  beforeAll(async () => (kubeConfig = await api.start()));
  afterAll(async () => api.stop());
  beforeEach(() => {
    api.deployments.clear();
    api.replicasOwners.clear();
    api.deploymentRequests.length = 0;
    api.deploymentsAccess = ROLE;
    delete api.onDeploymentRequest;
  });

  it('keeps the count when the manifest that set it stops setting it (an autoscaler takes over)', async () => {
    api.addDeployment(NAMESPACE, 'api', 2, 'helm');
    api.addDeployment(NAMESPACE, 'worker', 2, 'helm');
    expect(await keep(['api'])).toEqual([{ deployment: 'api', replicas: 2 }]);
    expect(owners('api')).toEqual([MANAGER, 'helm']);
    // Helm's next apply leaves spec.replicas out: kept where the count was co-owned, reset to 1 where it was not.
    expect(api.applyManifest(NAMESPACE, 'api', 'helm', undefined)[0]).toBe(200);
    expect(api.applyManifest(NAMESPACE, 'worker', 'helm', undefined)[0]).toBe(200);
    expect({ api: replicas('api'), worker: replicas('worker') }).toEqual({ api: 2, worker: 1 });
  });

  it('applies the count the autoscaler set, which stays its own too', async () => {
    api.addDeployment(NAMESPACE, 'api', 2, 'helm');
    api.scaleDeployment(NAMESPACE, 'api', 5);
    expect(await keep(['api'])).toEqual([{ deployment: 'api', replicas: 5 }]);
    expect(owners('api')).toEqual([MANAGER, 'kube-controller-manager']);
    expect(replicas('api')).toBe(5);
  });

  it('applies the new count when the autoscaler changes it between the read and the apply, never the old one', async () => {
    api.addDeployment(NAMESPACE, 'api', 2, 'helm');
    api.scaleDeployment(NAMESPACE, 'api', 3);
    let scaled = false;
    api.onDeploymentRequest = ({ verb }) => {
      if (verb !== 'patch' || scaled) return;
      scaled = true;
      api.scaleDeployment(NAMESPACE, 'api', 6);
    };
    expect(await keep(['api'])).toEqual([{ deployment: 'api', replicas: 6 }]);
    expect(replicas('api')).toBe(6);
    expect(api.deploymentRequests.map((r) => r.verb)).toEqual(['get', 'patch', 'get', 'patch']);
  });

  it('leaves a Deployment that does not exist alone (an apply would create it)', async () => {
    api.addDeployment(NAMESPACE, 'api', 2, 'helm');
    expect(await keep(['worker', 'api'])).toEqual([{ deployment: 'worker' }, { deployment: 'api', replicas: 2 }]);
    expect(api.deploymentRequests).toEqual([
      { verb: 'get', name: 'worker' },
      { verb: 'get', name: 'api' },
      { verb: 'patch', name: 'api' },
    ]);
  });

  it('needs get and patch on each Deployment by name, and says which it could not read', async () => {
    api.addDeployment(NAMESPACE, 'other', 2, 'helm');
    await expect(keep(['other'])).rejects.toThrow(
      'cannot read Deployment gateway/other: the API server answered 403 Forbidden: deployments.apps "other" is forbidden: User "system:serviceaccount:gateway:tester" cannot get resource "deployments" in API group "apps"',
    );
  });
});

describe('the keep-replicas command, as a process started through bin/gateway.js', () => {
  const api = new KubernetesApiStandIn();
  const scratch = mkdtempSync(join(tmpdir(), 'keep-replicas-'));
  const kubeconfig = join(scratch, 'kubeconfig');
  const gateway = fileURLToPath(new URL('../../../bin/gateway.js', import.meta.url));
  beforeAll(async () => writeFileSync(kubeconfig, (await api.start()).exportConfig()));
  afterAll(async () => (await api.stop(), rmSync(scratch, { recursive: true, force: true })));

  it('keeps each count, says so, and exits 0; exits 2 without a Deployment', async () => {
    api.addDeployment(NAMESPACE, 'api', 3, 'helm');
    const run = (args: string[]) =>
      promisify(execFile)(
        process.execPath,
        ['--conditions=source', '--import', 'tsx', gateway, 'keep-replicas', ...args],
        {
          env: { ...process.env, KUBECONFIG: kubeconfig },
        },
      );
    const { stdout } = await run([
      '--namespace',
      NAMESPACE,
      '--field-manager',
      MANAGER,
      '--deployment',
      'api',
      '--deployment',
      'gone',
    ]);
    expect(stdout).toBe(
      `Deployment gateway/api: replicas 3 kept (co-owned by ${MANAGER})\nDeployment gateway/gone does not exist yet: nothing to keep\n`,
    );
    expect([...api.replicasOwners.get(`${NAMESPACE}/api`)!.keys()].sort()).toEqual([MANAGER, 'helm']);
    await expect(run(['--namespace', NAMESPACE])).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('keep-replicas: --deployment: at least one is required'),
    });
  }, 120_000);
});
