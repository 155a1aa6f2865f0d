import { waitUntil } from '@frequency-gateway/devstack';
import { eachLimited } from '@frequency-gateway/devstack';
import type { GatewayClient } from './gatewayClient.js';
import type { ReceivedWebhooks } from './receiver.js';

/**
 * The announcements the receiver got at `path` for each numbered post of a run (content `<tag> #<n>`): by number,
 * the distinct webhook-ids it came under (one per announcement on chain), and how many deliveries repeated an id
 * already seen. A repeat is the at-least-once delivery the webhook spec allows (the sender did not see the 200 and
 * sent it again; a receiver drops it by its id); a second id is the same post announced twice.
 */
export async function deliveriesByNumber(
  receiver: ReceivedWebhooks,
  gateway: GatewayClient,
  path: string,
  tag: string,
): Promise<{ ids: Map<number, Set<string>>; repeated: number }> {
  const ids = new Map<number, Set<string>>();
  let repeated = 0;
  const deliveries = await receiver.at(path);
  const notes = await eachLimited(deliveries, 16, async (delivery) => {
    const url = (delivery.body.announcement as { url?: string } | undefined)?.url;
    return url ? gateway.noteAt(url) : undefined;
  });
  const pattern = new RegExp(`^${tag} #(\\d+)$`);
  for (const [index, note] of notes.entries()) {
    const number = pattern.exec(String(note?.content ?? ''))?.[1];
    if (number === undefined) continue;
    const seen = ids.get(Number(number)) ?? new Set<string>();
    // An unsigned delivery has no id: each counts as one of its own.
    const id = String(deliveries[index]!.headers['webhook-id'] ?? `unsigned ${index}`);
    if (seen.has(id)) repeated++;
    seen.add(id);
    ids.set(Number(number), seen);
  }
  return { ids, repeated };
}

/**
 * Waits until the content watcher delivered each of `count` numbered broadcasts, then until its scanner has passed
 * the chain's finalized head and nothing more arrives for 3 s (so that a copy published twice would have come
 * too). Resolves with how many were never delivered, how many were announced more than once (a second
 * webhook-id), how many deliveries repeated an id (allowed: see `deliveriesByNumber`), and the ids per number.
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
}): Promise<{ lost: number; duplicated: number; redelivered: number; counts: Map<number, number> }> {
  const { receiver, gateway, path, tag, count } = options;
  const expected = options.numbers ?? Array.from({ length: count }, (_, n) => n);
  let seen = { ids: new Map<number, Set<string>>(), repeated: 0 };
  await waitUntil(
    async () => {
      seen = await deliveriesByNumber(receiver, gateway, path, tag);
      return expected.every((n) => seen.ids.has(n));
    },
    options.timeoutMs,
    () => `${expected.length} broadcasts delivered by the content watcher (${seen.ids.size} so far)`,
  );
  const head = await gateway.finalizedBlock();
  await waitUntil(async () => (await options.scannedBlock()) >= head, 120_000, `the watcher scanning block ${head}`);
  const total = () => [...seen.ids.values()].reduce((sum, ids) => sum + ids.size, seen.repeated);
  let last = total();
  let quietSince = Date.now();
  await waitUntil(
    async () => {
      seen = await deliveriesByNumber(receiver, gateway, path, tag);
      if (total() !== last) [last, quietSince] = [total(), Date.now()];
      return Date.now() - quietSince >= 3_000;
    },
    120_000,
    `no more deliveries of ${tag} for 3 s`,
  );
  let lost = 0;
  let duplicated = 0;
  const counts = new Map<number, number>();
  for (const n of expected) {
    const times = seen.ids.get(n)?.size ?? 0;
    counts.set(n, times);
    if (times === 0) lost++;
    else duplicated += times - 1;
  }
  return { lost, duplicated, redelivered: seen.repeated, counts };
}
