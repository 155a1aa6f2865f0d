import type { ApiPromise } from '@polkadot/api';
import type { BlockHash } from '@polkadot/types/interfaces';
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
import { Retractions } from './retractions.js';

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
    private readonly options: Pick<
      TrackerOptions,
      'trustUnfinalized' | 'onOutcome' | 'settledRetentionSeconds' | 'logger'
    >,
    private readonly resubmission: Resubmission,
  ) {
    if (options.trustUnfinalized) this.retractions = new Retractions(api, redis, keys, options.logger);
  }

  /** With TRUST_UNFINALIZED_BLOCKS: the scanned blocks and settled records kept until final. */
  private readonly retractions: Retractions | undefined;

  /** The head the scan walks to: the best block with TRUST_UNFINALIZED_BLOCKS, else the finalized one. */
  private async target(): Promise<number> {
    const { chain } = this.api.rpc;
    // An argument given as undefined would be sent as the zero hash: the best header is asked without one.
    const header = this.options.trustUnfinalized
      ? await chain.getHeader()
      : await chain.getHeader(await chain.getFinalizedHead());
    return header.number.toNumber();
  }

  private async pending(): Promise<Map<string, PendingRecord>> {
    return readPending(this.redis, this.keys);
  }

  private async settle(outcome: Settled, record: PendingRecord | undefined): Promise<void> {
    const { txHash } = outcome;
    const jobs = await this.redis.smembers(this.keys.jobs(txHash));
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
        await this.options.onOutcome({ ...outcome, jobs: [...jobs].sort() } as TransactionOutcome);
      },
    );
    const settling = this.redis
      .multi()
      .hdel(this.keys.pending, txHash)
      .del(this.keys.jobs(txHash))
      .set(this.keys.settled(txHash), outcome.status, 'EX', this.options.settledRetentionSeconds ?? 3_600);
    // Settled from a best block: kept until that block is final, to be opened again should it be retracted.
    if (record) this.retractions?.keep(settling, txHash, record, jobs, outcome.blockNumber);
    await settling.exec();
  }

  /** Scans every block after the last one scanned up to the finalized (or best) head; returns the last scanned. */
  async scanOnce(onBlock: () => void = () => undefined): Promise<number> {
    await this.retractions?.rewind();
    const target = await this.target();
    let pending = await this.pending();
    const stored = await this.redis.get(this.keys.scanned);
    // First run: start where the oldest recorded transaction could first appear.
    const earliest = Math.min(target, ...[...pending.values()].map((record) => record.birth));
    let next = stored === null ? earliest : Number(stored) + 1;
    let position = stored ?? '';
    // With TRUST_UNFINALIZED_BLOCKS, a block whose parent is not the block scanned before it (a reorganisation came
    // during the round) ends the round, and the next one rewinds.
    let parent = (await this.retractions?.scannedHash(next - 1)) ?? null;
    for (; next <= target; next++) {
      const blockHash = pending.size > 0 || this.retractions ? await this.api.rpc.chain.getBlockHash(next) : undefined;
      if (this.retractions) {
        if (!(await this.retractions.follows(blockHash!.toHex(), parent))) break;
        parent = blockHash!.toHex();
      }
      if (pending.size > 0) {
        await this.scanBlock(next, blockHash!, pending);
        pending = await this.pending();
      }
      // Every write of the block's outcomes was answered before this one, so a Redis replica that has the new
      // position has them too (a replica holds a prefix of its primary's writes).
      if ((await ADVANCE.run(this.redis, [this.keys.scanned], [next, position])) !== 1)
        throw new ScanPositionMovedError(position, await this.redis.get(this.keys.scanned));
      position = String(next);
      await this.retractions?.scanned(next, blockHash!.toHex());
      onBlock();
    }
    await this.resubmission.resubmitAbandoned(pending, target);
    return next - 1;
  }

  private async scanBlock(number: number, blockHash: BlockHash, pending: Map<string, PendingRecord>): Promise<void> {
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
    // Valid in blocks birth..death-1: once block death-1 is scanned without it, it can never be included. Nor
    // once a block is scanned whose state holds a newer runtime than the one it was signed for: the blocks after
    // it verify its signature against that runtime's versions.
    const newer = await this.newerRuntime(blockHash, number, pending);
    for (const [txHash, record] of pending) {
      if (found.has(txHash)) continue;
      const base = { txHash: txHash as `0x${string}`, status: 'expired', blockNumber: number } as const;
      if (record.death <= number + 1) await this.settle(base, record);
      else if (newer !== undefined && record.signedFor && record.signedFor.specVersion < newer)
        await this.settle(
          { ...base, runtimeUpgrade: { signedFor: record.signedFor.specVersion, chainRuns: newer } },
          record,
        );
    }
  }

  /**
   * The spec version of the runtime in block `number`'s state, when a pending record was signed for an older
   * runtime than the api's (only then is it read: an upgrade came after that record was signed).
   */
  private async newerRuntime(
    blockHash: BlockHash,
    number: number,
    pending: Map<string, PendingRecord>,
  ): Promise<number | undefined> {
    const current = this.api.runtimeVersion.specVersion.toNumber();
    const older = [...pending.values()].some(
      (record) => record.signedFor !== undefined && record.signedFor.specVersion < current && record.death > number + 1,
    );
    if (!older) return undefined;
    return (await this.api.rpc.state.getRuntimeVersion(blockHash)).specVersion.toNumber();
  }
}
