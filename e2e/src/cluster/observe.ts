import { waitUntil } from '@frequency-gateway/devstack';
import { eachLimited, type GatewayClient } from './gateway.js';
import type { KubeApi, Lease, Pod } from './kubeApi.js';
import type { ReceivedWebhooks } from '../journeys/receiver.js';

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

/** How many times each numbered post of a run (content `<tag> #<n>`) came to the receiver's path. */
export async function deliveriesByNumber(
  receiver: ReceivedWebhooks,
  gateway: GatewayClient,
  path: string,
  tag: string,
): Promise<Map<number, number>> {
  const counts = new Map<number, number>();
  const deliveries = await receiver.at(path);
  const notes = await eachLimited(deliveries, 16, async (delivery) => {
    const url = (delivery.body.announcement as { url?: string } | undefined)?.url;
    return url ? gateway.noteAt(url) : undefined;
  });
  const pattern = new RegExp(`^${tag} #(\\d+)$`);
  for (const note of notes) {
    const number = pattern.exec(String(note?.content ?? ''))?.[1];
    if (number !== undefined) counts.set(Number(number), (counts.get(Number(number)) ?? 0) + 1);
  }
  return counts;
}

/**
 * Waits until the content watcher delivered each of `count` numbered broadcasts, then until its scanner has passed
 * the chain's finalized head and nothing more arrives for 3 s (so that a copy published twice would have come
 * too). Resolves with how many were never delivered and how many deliveries were one too many.
 */
export async function deliveredOnce(options: {
  receiver: ReceivedWebhooks;
  gateway: GatewayClient;
  path: string;
  tag: string;
  count: number;
  timeoutMs: number;
  /** The highest block the watcher's scanner has scanned (its leader's watcher_scanner_block). */
  scannedBlock: () => Promise<number>;
}): Promise<{ lost: number; duplicated: number; counts: Map<number, number> }> {
  const { receiver, gateway, path, tag, count } = options;
  let counts = new Map<number, number>();
  await waitUntil(
    async () => {
      counts = await deliveriesByNumber(receiver, gateway, path, tag);
      return counts.size === count;
    },
    options.timeoutMs,
    () => `${count} broadcasts delivered by the content watcher (${counts.size} so far)`,
  );
  const head = await gateway.finalizedBlock();
  await waitUntil(async () => (await options.scannedBlock()) >= head, 120_000, `the watcher scanning block ${head}`);
  const total = (map: Map<number, number>) => [...map.values()].reduce((sum, n) => sum + n, 0);
  let last = total(counts);
  let quietSince = Date.now();
  await waitUntil(
    async () => {
      counts = await deliveriesByNumber(receiver, gateway, path, tag);
      if (total(counts) !== last) [last, quietSince] = [total(counts), Date.now()];
      return Date.now() - quietSince >= 3_000;
    },
    120_000,
    `no more deliveries of ${tag} for 3 s`,
  );
  let lost = 0;
  let duplicated = 0;
  for (let n = 0; n < count; n++) {
    const times = counts.get(n) ?? 0;
    if (times === 0) lost++;
    else duplicated += times - 1;
  }
  return { lost, duplicated, counts };
}
