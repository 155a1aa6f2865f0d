import { webhookReceiverProgram } from '@frequency-gateway/devstack';
import { ReceivedWebhooks } from '../clients/receiver.js';
import { kubectl } from '../commands.js';
import { restrictedPod, suiteLabels } from './manifests.js';
import type { ClusterImage } from './prepare.js';

const NAME = 'webhook-receiver';
/** The objects of the receiver: its program in a ConfigMap, a Pod of the gateway image running it, a Service. */
function manifests(image: ClusterImage, program: string): object {
  const labels = suiteLabels(NAME);
  const container = {
    name: 'receiver',
    image: `${image.repository}:${image.tag}`,
    command: ['node', '/receiver/server.mjs'],
    ports: [{ name: 'http', containerPort: 8080 }],
    readinessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 1 },
    resources: { requests: { cpu: '10m', memory: '64Mi' }, limits: { memory: '256Mi' } },
    volumeMounts: [{ name: 'script', mountPath: '/receiver', readOnly: true }],
  };
  return {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: NAME, labels }, data: { 'server.mjs': program } },
      restrictedPod(NAME, labels, container, [{ name: 'script', configMap: { name: NAME } }]),
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
 * name), `url` what the tests read it at (its NodePort on the node's address).
 */
export class WebhookReceiver extends ReceivedWebhooks {
  /** Starts the receiver in the namespace and resolves once its Service answers. */
  static async start(namespace: string, image: ClusterImage, nodeAddress: string): Promise<WebhookReceiver> {
    await kubectl(['-n', namespace, 'apply', '-f', '-'], {
      input: JSON.stringify(manifests(image, await webhookReceiverProgram())),
    });
    await kubectl(['-n', namespace, 'wait', '--for=condition=Ready', `pod/${NAME}`, '--timeout=120s']);
    const nodePort = (
      await kubectl(['-n', namespace, 'get', 'service', NAME, '-o', 'jsonpath={.spec.ports[0].nodePort}'])
    ).trim();
    const receiver = new WebhookReceiver(
      `http://${nodeAddress}:${nodePort}`,
      `http://${NAME}.${namespace}.svc.cluster.local`,
    );
    await receiver.answering();
    return receiver;
  }

  /** Its Service's DNS name, the one destination the release's outbound policy opens. */
  get host(): string {
    return new URL(this.destination('/')).hostname;
  }

  /** A URL of the receiver as the components reach it. */
  inCluster(path: string): string {
    return this.destination(path);
  }
}
