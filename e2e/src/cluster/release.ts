import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitUntil } from '@frequency-gateway/devstack';
import { CHART, clusterSetting, helmBinary, kubectl, must } from '../commands.js';
import { podReady, type KubeApi, type List, type Pod } from './kubeApi.js';
import type { ClusterImage } from './prepare.js';

export const RELEASE = 'gw';

/** The InternalIP of the local cluster's one node (dev/cluster/up: the host's first global IPv4). */
export async function nodeAddress(kube: KubeApi): Promise<string> {
  const nodes = await kube.get<List<{ status: { addresses: { type: string; address: string }[] } }>>('/api/v1/nodes');
  if (nodes.items.length !== 1) throw new Error(`the local cluster has ${nodes.items.length} nodes, not one`);
  const address = nodes.items[0]!.status.addresses.find((entry) => entry.type === 'InternalIP')?.address;
  if (!address) throw new Error('the local cluster node has no InternalIP');
  return address;
}
/** The chart's resource name prefix for release `gw`. */
export const FULLNAME = `${RELEASE}-frequency-gateway`;

export type Service = 'account' | 'content-publishing' | 'content-watcher';
export type Role = 'api' | 'worker';

/** The chart's values key of each service. */
export const SERVICE_KEYS: Record<Service, string> = {
  account: 'account',
  'content-publishing': 'contentPublishing',
  'content-watcher': 'contentWatcher',
};
const API_PORTS: Record<Service, number> = { account: 3013, 'content-publishing': 3010, 'content-watcher': 3011 };

/** A component's HTTP port in its pod (workers serve health and metrics on the api's port + 10). */
export const portOf = (service: Service, role: Role) => API_PORTS[service] + (role === 'worker' ? 10 : 0);
export const componentOf = (service: Service, role: Role) => `${service}-${role}`;

/** The once-per-deployment loop each service's worker elects a leader for (the `lease` label of leader_is_leader). */
export const LEADER_LOOPS: Record<Service, string> = {
  account: 'transaction-tracker',
  'content-publishing': 'transaction-tracker',
  'content-watcher': 'content-scanner',
};

/** Their Leases: `<LEADER_LEASE_PREFIX>-<CACHE_KEY_PREFIX>-<loop>`, the chart's prefix being the release's full name. */
export const LEASES = Object.fromEntries(
  Object.entries(LEADER_LOOPS).map(([service, loop]) => [service, `${FULLNAME}-${service}-${loop}`]),
) as Record<Service, string>;

/**
 * The values every release of the suites (and the install benchmark) starts from: the image as loaded (never pulled),
 * the in-cluster devchain pinned to that tag (it keeps its state through an upgrade to another one) with //Alice as the
 * provider, the bundled Redis and IPFS on 1 GiB volumes, small requests (two cores for everything), and NodePort
 * Services for the apis and the IPFS gateway (the host reaches them on the node's address, never a ClusterIP).
 */
export function baseValues(image: ClusterImage, namespace: string) {
  const small = { requests: { cpu: '10m', memory: '128Mi' }, limits: { memory: '768Mi' } };
  return {
    image: { repository: image.repository, tag: image.tag, pullPolicy: 'Never' },
    devchain: { enabled: true, imageTag: image.tag, resources: small },
    secrets: { values: { PROVIDER_ACCOUNT_SEED_PHRASE: '//Alice' } as Record<string, string> },
    service: { type: 'NodePort' },
    ipfsGatewayUrl: `http://${RELEASE}-ipfs-gateway.${namespace}.svc.cluster.local:8080/ipfs/[CID]`,
    componentDefaults: { resources: small },
    redis: { persistence: { enabled: true, size: '1Gi' }, resources: small },
    ipfs: { persistence: { enabled: true, size: '1Gi' }, gateway: { serviceType: 'NodePort' }, resources: small },
  };
}

/** What a helm command printed, and how long it took. */
export interface HelmRun {
  output: string;
  seconds: number;
}

/**
 * One release of the chart in a namespace of its own that enforces the restricted Pod Security Standard. Values
 * go to Helm as files (JSON is YAML); every later upgrade reuses them and adds its own.
 */
export class GatewayRelease {
  private readonly folder = mkdtempSync(join(tmpdir(), 'cluster-release-'));
  private files = 0;

  constructor(
    readonly kube: KubeApi,
    readonly namespace: string,
    readonly image: ClusterImage,
  ) {}

  /** Creates the namespace, labelled to enforce (and warn and audit at) the restricted Pod Security level. */
  async createNamespace(): Promise<void> {
    const labels = Object.fromEntries(
      ['enforce', 'warn', 'audit'].map((mode) => [`pod-security.kubernetes.io/${mode}`, 'restricted']),
    );
    const answer = await this.kube.request('POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: this.namespace, labels: { ...labels, 'app.kubernetes.io/part-of': 'frequency-gateway-e2e' } },
    });
    if (answer.status !== 201) throw new Error(`creating namespace ${this.namespace}: ${answer.status} ${answer.body}`);
  }

  /** Deletes the namespace and waits until it is gone (its volumes are released with it). */
  async deleteNamespace(): Promise<void> {
    await this.kube.request('DELETE', `/api/v1/namespaces/${this.namespace}`);
    await waitUntil(
      async () => (await this.kube.request('GET', `/api/v1/namespaces/${this.namespace}`)).status === 404,
      180_000,
      `namespace ${this.namespace} deleted`,
    );
    rmSync(this.folder, { recursive: true, force: true });
  }

  async helm(args: string[], timeoutMs = 600_000): Promise<HelmRun> {
    const helm = helmBinary();
    if (!helm) throw new Error('helm is missing: run make tools');
    const started = Date.now();
    const output = await must(helm, [...args, '--namespace', this.namespace], {
      timeoutMs,
      env: { KUBECONFIG: await clusterSetting('CLUSTER_KUBECONFIG') },
    });
    return { output, seconds: (Date.now() - started) / 1000 };
  }

  private valuesFile(values: object): string {
    const file = join(this.folder, `values-${++this.files}.json`);
    writeFileSync(file, JSON.stringify(values, null, 2));
    return file;
  }

  /**
   * `helm install --wait`: returns once Helm saw every workload ready. The chart is the checkout's, or a packaged
   * one at its version from a plain-HTTP OCI registry (`oci://…`).
   */
  install(values: object, from?: { reference: string; version: string }): Promise<HelmRun> {
    const chart = from ? [from.reference, '--version', from.version, '--plain-http'] : [CHART];
    return this.helm(['install', RELEASE, ...chart, '-f', this.valuesFile(values), '--wait', '--timeout', '8m']);
  }

  /** `helm upgrade --reuse-values` with more values, waiting for the rollout; the chart as for install. */
  upgrade(values: object, to?: { reference: string; version: string }): Promise<HelmRun> {
    const chart = to ? [to.reference, '--version', to.version, '--plain-http'] : [CHART];
    return this.helm([
      'upgrade',
      RELEASE,
      ...chart,
      '--reuse-values',
      '-f',
      this.valuesFile(values),
      '--wait',
      '--timeout',
      '8m',
    ]);
  }

  /** The release's current revision. */
  async revision(): Promise<number> {
    const status = JSON.parse((await this.helm(['status', RELEASE, '-o', 'json'])).output) as { version: number };
    return status.version;
  }

  /** The release's pods that run (completed hook and test pods left out), optionally of one component. */
  async pods(component?: string): Promise<Pod[]> {
    const selector = [
      `app.kubernetes.io/instance=${RELEASE}`,
      ...(component ? [`app.kubernetes.io/component=${component}`] : []),
    ];
    const list = await this.kube.get<List<Pod>>(
      `/api/v1/namespaces/${this.namespace}/pods?labelSelector=${encodeURIComponent(selector.join(','))}`,
    );
    return list.items.filter((pod) => pod.status.phase !== 'Succeeded' && pod.status.phase !== 'Failed');
  }

  /** Waits until the release runs `count` pods (or, without a count, any), none terminating, all Ready. */
  async allReady(timeoutMs: number, count?: number, component?: string): Promise<Pod[]> {
    let pods: Pod[] = [];
    await waitUntil(
      async () => {
        pods = await this.pods(component);
        const settled = pods.every((pod) => !pod.metadata.deletionTimestamp && podReady(pod));
        return settled && pods.length > 0 && (count === undefined || pods.length === count);
      },
      timeoutMs,
      () =>
        `every pod${component ? ` of ${component}` : ''} Ready${count === undefined ? '' : ` (${count})`}; now: ` +
        pods.map((pod) => `${pod.metadata.name} ${podReady(pod) ? 'Ready' : pod.status.phase}`).join(', '),
    );
    return pods;
  }

  /**
   * http://<node IP>:<nodePort> of a NodePort Service of the namespace: the InternalIP of the one node of the local
   * cluster (this host's own address; the cluster's kube-proxy does not open NodePorts on loopback) routes to the
   * Service's ready pods, whichever they are, through a rolling upgrade too.
   */
  async nodePortUrl(name: string): Promise<string> {
    const service = await this.kube.get<{ spec: { type: string; ports: { nodePort?: number }[] } }>(
      `/api/v1/namespaces/${this.namespace}/services/${name}`,
    );
    const nodePort = service.spec.ports[0]?.nodePort;
    if (service.spec.type !== 'NodePort' || !nodePort) throw new Error(`Service ${name} is not a NodePort Service`);
    return `http://${await nodeAddress(this.kube)}:${nodePort}`;
  }

  /** Scales a Deployment of the release through its scale subresource (what `kubectl scale` does). */
  async scale(deployment: string, replicas: number): Promise<void> {
    await kubectl(['-n', this.namespace, 'scale', `deployment/${deployment}`, `--replicas=${replicas}`]);
  }

  /**
   * Deletes a pod without waiting for it to go: gracefully (SIGTERM, then the component's own shutdown), or
   * `--grace-period=0 --force` (the kubelet kills the container at once; the Deployment makes a new pod meanwhile).
   */
  async deletePod(name: string, how: 'graceful' | 'force'): Promise<void> {
    const force = how === 'force' ? ['--grace-period=0', '--force'] : [];
    await kubectl(['-n', this.namespace, 'delete', 'pod', name, '--wait=false', ...force]);
  }
}
