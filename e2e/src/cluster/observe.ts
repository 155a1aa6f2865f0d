import type { KubeApi, Lease, Pod } from './kubeApi.js';

export { deliveredOnce, deliveriesByNumber } from '../clients/delivered.js';

/** A gauge or counter of a pod's /metrics (through the API server's proxy), summed over lines matching `labels`. */
export async function podMetric(
  kube: KubeApi,
  namespace: string,
  pod: Pod,
  port: number,
  name: string,
  labels = '',
): Promise<number> {
  const answer = await kube.toPod(namespace, pod.metadata.name, port, '/metrics');
  if (answer.status !== 200) throw new Error(`${pod.metadata.name} /metrics: ${answer.status}`);
  let sum = 0;
  for (const line of answer.body.split('\n')) {
    const match = new RegExp(`^${name}(\\{.*\\})? (\\S+)$`).exec(line);
    if (match && (match[1] ?? '').includes(labels)) sum += Number(match[2]);
  }
  return sum;
}

export async function leaseOf(kube: KubeApi, namespace: string, name: string): Promise<Lease | undefined> {
  const answer = await kube.request('GET', `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${name}`);
  return answer.status === 200 ? (JSON.parse(answer.body) as Lease) : undefined;
}
