import { waitUntil } from '@frequency-gateway/devstack';
import { eachLimited } from '@frequency-gateway/devstack';
import type { GatewayClient } from './gatewayClient.js';
import type { ReceivedWebhooks } from './receiver.js';

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
  /** The numbers that must come (default every one below `count`): those accepted when some were refused. */
  numbers?: number[];
  timeoutMs: number;
  /** The highest block the watcher's scanner has scanned (its leader's watcher_scanner_block). */
  scannedBlock: () => Promise<number>;
}): Promise<{ lost: number; duplicated: number; counts: Map<number, number> }> {
  const { receiver, gateway, path, tag, count } = options;
  const expected = options.numbers ?? Array.from({ length: count }, (_, n) => n);
  let counts = new Map<number, number>();
  await waitUntil(
    async () => {
      counts = await deliveriesByNumber(receiver, gateway, path, tag);
      return expected.every((n) => counts.has(n));
    },
    options.timeoutMs,
    () => `${expected.length} broadcasts delivered by the content watcher (${counts.size} so far)`,
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
  for (const n of expected) {
    const times = counts.get(n) ?? 0;
    if (times === 0) lost++;
    else duplicated += times - 1;
  }
  return { lost, duplicated, counts };
}
