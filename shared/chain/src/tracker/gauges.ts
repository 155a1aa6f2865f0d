import type { Registry } from 'prom-client';
import { registerScrapedGauges } from '@frequency-gateway/platform';
import type { PendingRecord } from './records.js';

interface PendingSummary {
  count: number;
  /** Unknown until the finalized head is. */
  oldestAgeBlocks?: number;
}

/** Per registry, the tracker whose records the gauges read: a tracker built again (a start retried) takes over. */
const pendingSources = new WeakMap<Registry, () => Promise<PendingSummary | undefined>>();

/**
 * The pending-transaction gauges, read from Redis at scrape time (so every replica reports the same, leader or
 * not): how many recorded transactions have no outcome, and how many finalized blocks the oldest of them has
 * waited since it was signed; a transaction that is not finalized within its mortal era expires.
 */
export function registerPendingGauges(
  registry: Registry,
  pending: () => Promise<Map<string, PendingRecord>>,
  finalizedHead: (() => number) | undefined,
): void {
  pendingSources.set(registry, async () => pendingSummary(await pending(), finalizedHead));
  registerScrapedGauges<PendingSummary>(
    registry,
    [
      {
        name: 'chain_transactions_pending',
        help: 'Transactions submitted and not yet settled (included or expired)',
        field: 'count',
      },
      {
        name: 'chain_transaction_oldest_pending_blocks',
        help: 'Finalized blocks since the oldest unsettled transaction was signed; 0 when none is pending',
        field: 'oldestAgeBlocks',
      },
    ],
    async () => pendingSources.get(registry)?.(),
  );
}

/** The pending transactions for the gauges (their age unknown until the finalized head is). */
function pendingSummary(
  pending: Map<string, PendingRecord>,
  finalizedHead: (() => number) | undefined,
): PendingSummary {
  const births = [...pending.values()].map((record) => record.birth);
  if (births.length === 0) return { count: 0, oldestAgeBlocks: 0 };
  const head = finalizedHead?.() ?? -1;
  if (head < 0) return { count: births.length };
  return { count: births.length, oldestAgeBlocks: Math.max(0, head - Math.min(...births)) };
}
