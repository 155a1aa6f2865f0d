import type { ApiPromise } from '@polkadot/api';
import { inSpan, RedisScript, type RedisClient } from '@frequency-gateway/platform';
import { decodeDispatchError } from '../transactionErrors.js';
import {
  readPending,
  type ChainEvent,
  type PendingRecord,
  type Settled,
  type TrackerKeys,
  type TrackerOptions,
  type TransactionOutcome,
} from './records.js';
import type { Resubmission } from './resubmission.js';

const ADVANCE = RedisScript.fromFile(new URL('./advanceScan.lua', import.meta.url), 1);

/**
 * The stored scan position is not the one the scan left: the Redis primary changed and lost its latest writes
 * (or a second scanner ran). The round stops; the next one scans again from the stored position, and the
 * outcomes of the blocks scanned again are settled again (settling is idempotent).
 */
export class ScanPositionMovedError extends Error {
  constructor(expected: string, found: string | null) {
    super(
      `the scan position is ${found ?? 'not stored'} where the scanner left ${expected || 'none'}: scanning again from the stored one`,
    );
    this.name = 'ScanPositionMovedError';
  }
}

/**
 * The scanner's side of the tracker: walks blocks in order from the stored position, settles each recorded
 * transaction found in one (succeeded or failed) or whose era passed without it (expired), and ends each round
 * by submitting abandoned transactions again.
 */
export class Scanning {
  constructor(
    private readonly api: ApiPromise,
    private readonly redis: RedisClient,
    private readonly keys: TrackerKeys,
    private readonly options: Pick<TrackerOptions, 'trustUnfinalized' | 'onOutcome' | 'settledRetentionSeconds'>,
    private readonly resubmission: Resubmission,
  ) {}

  private async target(): Promise<number> {
    const hash = this.options.trustUnfinalized ? undefined : await this.api.rpc.chain.getFinalizedHead();
    return (await this.api.rpc.chain.getHeader(hash)).number.toNumber();
  }

  private async pending(): Promise<Map<string, PendingRecord>> {
    return readPending(this.redis, this.keys);
  }

  private async settle(outcome: Settled, record: PendingRecord | undefined): Promise<void> {
    const trace = record?.trace;
    // From recording to the outcome; what the outcome causes (jobs, webhooks) belongs to the same trace.
    await inSpan(
      'chain finalization',
      {
        ...(trace ? { parent: trace } : {}),
        ...(record?.recordedAt !== undefined ? { startTime: record.recordedAt } : {}),
        attributes: {
          'chain.tx_hash': outcome.txHash,
          'chain.outcome': outcome.status,
          'chain.block_number': outcome.blockNumber,
        },
      },
      async () => {
        const jobs = await this.redis.smembers(this.keys.jobs(outcome.txHash));
        await this.options.onOutcome({ ...outcome, jobs: jobs.sort() } as TransactionOutcome);
      },
    );
    const { txHash } = outcome;
    await this.redis
      .multi()
      .hdel(this.keys.pending, txHash)
      .del(this.keys.jobs(txHash))
      .set(this.keys.settled(txHash), outcome.status, 'EX', this.options.settledRetentionSeconds ?? 3_600)
      .exec();
  }

  /** Scans every block after the last one scanned up to the finalized (or best) head; returns the last scanned. */
  async scanOnce(): Promise<number> {
    const target = await this.target();
    let pending = await this.pending();
    const stored = await this.redis.get(this.keys.scanned);
    // First run: start where the oldest recorded transaction could first appear.
    const earliest = Math.min(target, ...[...pending.values()].map((record) => record.birth));
    let next = stored === null ? earliest : Number(stored) + 1;
    let position = stored ?? '';
    for (; next <= target; next++) {
      if (pending.size > 0) {
        await this.scanBlock(next, pending);
        pending = await this.pending();
      }
      // Every write of the block's outcomes was answered before this one, so a Redis replica that has the new
      // position has them too (a replica holds a prefix of its primary's writes).
      if ((await ADVANCE.run(this.redis, [this.keys.scanned], [next, position])) !== 1)
        throw new ScanPositionMovedError(position, await this.redis.get(this.keys.scanned));
      position = String(next);
    }
    await this.resubmission.resubmitAbandoned(pending, target);
    return next - 1;
  }

  private async scanBlock(number: number, pending: Map<string, PendingRecord>): Promise<void> {
    const blockHash = await this.api.rpc.chain.getBlockHash(number);
    const [block, events] = await Promise.all([
      this.api.rpc.chain.getBlock(blockHash),
      this.api.query.system.events.at(blockHash),
    ]);
    const found = new Set<string>();
    for (const [index, extrinsic] of block.block.extrinsics.entries()) {
      const txHash = extrinsic.hash.toHex();
      if (!pending.has(txHash)) continue;
      found.add(txHash);
      const own = events.filter(({ phase }) => phase.isApplyExtrinsic && phase.asApplyExtrinsic.toNumber() === index);
      const list: ChainEvent[] = own.map(({ event }) => ({
        section: event.section,
        method: event.method,
        data: event.data.toJSON(),
      }));
      const failed = own.find(({ event }) => this.api.events.system.ExtrinsicFailed.is(event));
      const base = { txHash: txHash as `0x${string}`, blockNumber: number, blockHash: blockHash.toHex(), events: list };
      if (failed && this.api.events.system.ExtrinsicFailed.is(failed.event)) {
        const error = decodeDispatchError(this.api, failed.event.data.dispatchError);
        await this.settle({ ...base, status: 'failed', error }, pending.get(txHash));
      } else {
        await this.settle({ ...base, status: 'succeeded' }, pending.get(txHash));
      }
    }
    // Valid in blocks birth..death-1: once block death-1 is scanned without it, it can never be included.
    for (const [txHash, record] of pending) {
      if (!found.has(txHash) && record.death <= number + 1)
        await this.settle({ txHash: txHash as `0x${string}`, status: 'expired', blockNumber: number }, record);
    }
  }
}
