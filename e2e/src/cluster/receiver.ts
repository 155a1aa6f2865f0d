import { readFileSync } from 'node:fs';
import { waitUntil } from '@frequency-gateway/devstack';
import { verifyWebhook } from '@frequency-gateway/webhooks';
import { kubectl } from './commands.js';
import type { ClusterImage } from './prepare.js';

const NAME = 'webhook-receiver';
const SCRIPT = readFileSync(new URL('./receiverServer.mjs', import.meta.url), 'utf8');

/** One request the in-cluster receiver got. */
export interface Delivery {
  at: number;
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  raw: string;
  /** `raw` parsed as JSON. */
  body: Record<string, unknown>;
}

/** The objects of the receiver: its script in a ConfigMap, a Pod of the gateway image running it, a Service. */
function manifests(image: ClusterImage): object {
  const labels = { 'app.kubernetes.io/name': NAME, 'app.kubernetes.io/part-of': 'frequency-gateway-e2e' };
  return {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: NAME, labels }, data: { 'server.mjs': SCRIPT } },
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: NAME, labels },
        spec: {
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          terminationGracePeriodSeconds: 5,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: 1000,
            runAsGroup: 1000,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          containers: [
            {
              name: 'receiver',
              image: `${image.repository}:${image.tag}`,
              imagePullPolicy: 'Never',
              command: ['node', '/receiver/server.mjs'],
              ports: [{ name: 'http', containerPort: 8080 }],
              readinessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 1 },
              resources: { requests: { cpu: '10m', memory: '64Mi' }, limits: { memory: '256Mi' } },
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ['ALL'] },
              },
              volumeMounts: [{ name: 'script', mountPath: '/receiver', readOnly: true }],
            },
          ],
          volumes: [{ name: 'script', configMap: { name: NAME } }],
        },
      },
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: NAME, labels },
        // NodePort: the tests read it on the node's address (the only way in from the host besides port-forwards).
        spec: { type: 'NodePort', selector: labels, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
      },
    ],
  };
}

/**
 * The webhook receiver of a namespace: `inCluster` is what the gateway's components are given (its Service's DNS
 * name), `url` what the tests read it at (its NodePort on the node's address). Deliveries are fetched once each and kept here.
 */
export class WebhookReceiver {
  private readonly seen: Delivery[] = [];

  private constructor(
    readonly host: string,
    readonly url: string,
  ) {}

  /** Starts the receiver in the namespace and resolves once its Service answers. */
  static async start(namespace: string, image: ClusterImage, nodeAddress: string): Promise<WebhookReceiver> {
    await kubectl(['-n', namespace, 'apply', '-f', '-'], { input: JSON.stringify(manifests(image)) });
    await kubectl(['-n', namespace, 'wait', '--for=condition=Ready', `pod/${NAME}`, '--timeout=120s']);
    const nodePort = (
      await kubectl(['-n', namespace, 'get', 'service', NAME, '-o', 'jsonpath={.spec.ports[0].nodePort}'])
    ).trim();
    const receiver = new WebhookReceiver(`${NAME}.${namespace}.svc.cluster.local`, `http://${nodeAddress}:${nodePort}`);
    await waitUntil(
      async () => (await fetch(`${receiver.url}/healthz`)).ok,
      30_000,
      'the receiver through its Service',
    );
    return receiver;
  }

  /** A URL of the receiver as the components reach it. */
  inCluster(path: string): string {
    return `http://${this.host}${path}`;
  }

  /** Every request so far, in order of arrival. */
  async deliveries(): Promise<Delivery[]> {
    const answer = (await (await fetch(`${this.url}/received?from=${this.seen.length}`)).json()) as {
      deliveries: Omit<Delivery, 'body'>[];
    };
    for (const delivery of answer.deliveries) {
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(delivery.raw) as Record<string, unknown>;
      } catch {
        // not JSON: body stays empty, raw has it
      }
      this.seen.push({ ...delivery, body });
    }
    return [...this.seen];
  }

  /** The requests under a path so far. */
  async at(path: string): Promise<Delivery[]> {
    return (await this.deliveries()).filter((delivery) => delivery.path === path);
  }

  /** Waits for the transaction notification of a request at `path`; fails on a second one or a bad signature. */
  async notificationOf(path: string, referenceId: string, secret: string, timeoutMs = 120_000): Promise<Delivery> {
    const mine = async () => (await this.at(path)).filter((delivery) => delivery.body.referenceId === referenceId);
    await waitUntil(async () => (await mine()).length > 0, timeoutMs, `the webhook of ${referenceId} at ${path}`);
    const found = await mine();
    if (found.length !== 1) throw new Error(`${found.length} webhooks for ${referenceId} at ${path}`);
    if (!verifyWebhook(secret, found[0]!.headers, found[0]!.raw))
      throw new Error(`the webhook of ${referenceId} is not signed with the release's WEBHOOK_SECRET`);
    return found[0]!;
  }
}
