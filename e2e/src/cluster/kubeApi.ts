import { Agent, request } from 'node:https';
import { kubectl } from '../commands.js';

/** The fields of the Kubernetes objects the suites read. */
export interface Pod {
  metadata: {
    name: string;
    uid: string;
    creationTimestamp: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
  };
  spec: { containers: { name: string; image: string }[] };
  status: {
    phase: string;
    conditions?: { type: string; status: string; lastTransitionTime?: string }[];
    containerStatuses?: { name: string; ready: boolean; restartCount: number; image: string }[];
  };
}

export interface Lease {
  metadata: { name: string };
  spec: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

export interface KubeEvent {
  metadata: { name: string };
  involvedObject: { kind: string; name: string };
  reason: string;
  message: string;
  type: string;
  eventTime?: string;
  lastTimestamp?: string;
}

export interface Deployment {
  metadata: { name: string; generation: number };
  spec: { replicas?: number; template: { spec: { containers: { image: string }[] } } };
  status: { replicas?: number; readyReplicas?: number; updatedReplicas?: number; observedGeneration?: number };
}

export interface List<T> {
  items: T[];
}

export interface ApiAnswer {
  status: number;
  body: string;
}

/** Ready: the kubelet's readiness probe (the component's /readyz) passes. */
export const podReady = (pod: Pod) =>
  pod.status.conditions?.some((condition) => condition.type === 'Ready' && condition.status === 'True') ?? false;

export const restartsOf = (pod: Pod) =>
  (pod.status.containerStatuses ?? []).reduce((sum, container) => sum + container.restartCount, 0);

/**
 * The local cluster's API server, called directly with the admin's client certificate from its kubeconfig: each
 * read is one HTTPS request instead of a kubectl process, and answers come back whatever their status (a pod's
 * 503 through the API server's proxy included).
 */
export class KubeApi {
  private constructor(
    private readonly server: URL,
    private readonly agent: Agent,
  ) {}

  static async connect(): Promise<KubeApi> {
    const config = JSON.parse(await kubectl(['config', 'view', '--raw', '-o', 'json'])) as {
      clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
      users: { user: { 'client-certificate-data': string; 'client-key-data': string } }[];
    };
    const cluster = config.clusters[0]?.cluster;
    const user = config.users[0]?.user;
    if (!cluster || !user) throw new Error('the local cluster kubeconfig names no cluster or user');
    const decode = (data: string) => Buffer.from(data, 'base64');
    const agent = new Agent({
      ca: decode(cluster['certificate-authority-data']),
      cert: decode(user['client-certificate-data']),
      key: decode(user['client-key-data']),
      keepAlive: true,
      maxSockets: 16,
    });
    return new KubeApi(new URL(cluster.server), agent);
  }

  request(
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
    timeoutMs = 15_000,
  ): Promise<ApiAnswer> {
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const call = request(
        new URL(path, this.server),
        {
          method,
          agent: this.agent,
          headers: payload === undefined ? {} : { 'content-type': contentType },
          timeout: timeoutMs,
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
          );
          response.on('error', reject);
        },
      );
      call.on('timeout', () => call.destroy(new Error(`${method} ${path}: no answer within ${timeoutMs} ms`)));
      call.on('error', reject);
      call.end(payload);
    });
  }

  /** A GET that must answer 200, parsed. */
  async get<T>(path: string): Promise<T> {
    const answer = await this.request('GET', path);
    if (answer.status !== 200) throw new Error(`GET ${path}: ${answer.status} ${answer.body.slice(0, 300)}`);
    return JSON.parse(answer.body) as T;
  }

  /**
   * A request to a port of a pod through the API server's proxy, answered whatever its status. A pod that is going
   * away may never answer: the default 5 s limit keeps a poll over several pods from waiting on it.
   */
  toPod(namespace: string, pod: string, port: number, path: string, timeoutMs = 5_000): Promise<ApiAnswer> {
    const proxied = `/api/v1/namespaces/${namespace}/pods/${pod}:${port}/proxy${path}`;
    return this.request('GET', proxied, undefined, undefined, timeoutMs);
  }

  close(): void {
    this.agent.destroy();
  }
}
