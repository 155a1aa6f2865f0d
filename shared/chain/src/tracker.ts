import type { ApiPromise } from '@polkadot/api';
import { Counter, type Registry } from 'prom-client';
import {
  claimArguments,
  currentTraceCarrier,
  inSpan,
  RedisScript,
  registerScrapedGauges,
  StaleRunError,
  type RunClaim,
  type Logger,
  type ReplicatedWrites,
  type RedisClient,
  type TraceCarrier,
} from '@frequency-gateway/platform';
import { alreadyImported, decodeDispatchError, submissionError, type ChainError } from './transactionErrors.js';
import type { SignedTransaction } from './submitter.js';

export interface ChainEvent {
  section: string;
  method: string;
  data: unknown;
}

/** How a recorded transaction ended, with every job that rode in it. */
export type TransactionOutcome = {
  txHash: `0x${string}`;
  jobs: string[];
} & (
  | { status: 'succeeded'; blockNumber: number; blockHash: string; events: ChainEvent[] }
  | { status: 'failed'; blockNumber: number; blockHash: string; events: ChainEvent[]; error: ChainError }
  | { status: 'expired'; blockNumber: number }
);

/** An outcome before its jobs are attached (each variant without `jobs`). */
type Settled = TransactionOutcome extends infer T ? (T extends unknown ? Omit<T, 'jobs'> : never) : never;

export interface TrackerOptions {
  /** Redis key prefix (CACHE_KEY_PREFIX). */
  prefix: string;
  /** Scan best blocks instead of finalized ones (TRUST_UNFINALIZED_BLOCKS). Default false. */
  trustUnfinalized?: boolean;
  /** Receives each outcome; when it throws, the outcome is offered again on the next scan. */
  onOutcome: (outcome: TransactionOutcome) => Promise<void>;
  /** Where the pending transactions are exported (chain_transactions_pending, chain_transaction_oldest_pending_blocks). */
  metrics?: Registry;
  /** The newest finalized block number (the connection's `heads().finalized`), to age pending transactions by. */
  finalizedHead?: () => number;
  /**
   * Acknowledged = durable (REDIS_DURABILITY=replicated): a record is confirmed on a replica before `record`
   * resolves, so that a transaction is never submitted with a record a failover could lose (nobody would settle
   * it, and its job, tried again, would submit its messages twice).
   */
  replicatedWrites?: Pick<ReplicatedWrites, 'mark' | 'confirm'>;
  /**
   * How long `record` may take (10 s): it resolves, and its caller submits, only within this time of its start;
   * later it throws, and the submission is left to the scan. With `replicatedWrites`, the record is written and
   * confirmed again until then.
   */
  recordWithinMs?: number;
  /**
   * When the scan submits a recorded transaction that is in no block yet again (20 s after it was recorded, and
   * again every as long): its submitter died, or lost Redis, between recording and submitting. Longer than
   * `recordWithinMs` plus the time a submission takes, so that the scan never races a submitter at work; shorter
   * than the nonce manager's gap timeout (30 s), so that the transaction fills its own nonce.
   */
  resubmitAfterMs?: number;
  /** How long a settled transaction's record cannot be written again (1 hour): longer than any late write. */
  settledRetentionSeconds?: number;
  /** Where resubmissions are logged. */
  logger?: Pick<Logger, 'info' | 'warn'>;
}

/**
 * A caller's write that goes with a record (see `record` and `forget`): a key set, or a field of a hash, with a
 * TTL; or a key deleted.
 */
export type RecordWrite =
  | {
      key: string;
      /** The hash field to set; without it the key itself is set. */
      field?: string;
      value: string;
      ttlSeconds: number;
    }
  | { key: string; delete: true };

/** The script arguments of the caller's writes (recordTransaction.lua): op, field, value, TTL each. */
function writeArguments(writes: readonly RecordWrite[]): { keys: string[]; args: (string | number)[] } {
  return {
    keys: writes.map((write) => write.key),
    args: writes.flatMap((write) =>
      'delete' in write
        ? ['del', '', '', 0]
        : [write.field === undefined ? 'set' : 'hset', write.field ?? '', write.value, write.ttlSeconds],
    ),
  };
}

/**
 * `record` took longer than `recordWithinMs` (Redis away): its caller must not submit, as the scan may already
 * have. The record stays, and the scan submits the transaction.
 */
export class RecordTooLateError extends Error {
  constructor(readonly txHash: string) {
    super(`transaction ${txHash} was recorded too late to be submitted now: the tracker's scan submits it`);
    this.name = 'RecordTooLateError';
  }
}

/**
 * The transaction's outcome is already settled: its record was not written again, nor the caller's writes.
 * Whoever recorded it must not submit it: it is in a block, or its era is over.
 */
export class TransactionSettledError extends Error {
  constructor(readonly txHash: string) {
    super(`transaction ${txHash} is already settled: not recorded again`);
    this.name = 'TransactionSettledError';
  }
}

interface PendingRecord {
  birth: number;
  death: number;
  nonce: number;
  /**
   * The signed extrinsic (hex), for the scan to submit again once nobody holds the transaction (its submitter
   * died, or lost Redis, between recording and submitting). Absent in records written before it was kept.
   */
  signed?: string;
  /** Its signer's address (absent with `signed` in older records). */
  signer?: string;
  /** When the transaction was first recorded (ms); with tracing on, the start of its finalization span. */
  recordedAt?: number;
  /** With tracing on: the span that submitted it. */
  trace?: TraceCarrier;
}

interface PendingSummary {
  count: number;
  /** Unknown until the finalized head is. */
  oldestAgeBlocks?: number;
}

/** Per registry, the tracker whose records the gauges read: a tracker built again (a start retried) takes over. */
const ADVANCE = RedisScript.fromFile(new URL('./advanceScan.lua', import.meta.url), 1);
const RECORD = RedisScript.fromFile(new URL('./recordTransaction.lua', import.meta.url));

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
 * What submitting an abandoned transaction again gave: `submitted` (the pool took it), `known` (the pool has it
 * already), `refused` (its nonce is used or its era over: the scan settles it), `unreachable` (tried again later).
 */
type ResubmissionResult = 'submitted' | 'known' | 'refused' | 'unreachable';

/** One counter per registry (a tracker built again, when a start is retried, reuses it). */
function resubmissionCounter(registry: Registry): Counter<'result'> {
  const name = 'chain_transactions_resubmitted_total';
  return (
    (registry.getSingleMetric(name) as Counter<'result'> | undefined) ??
    new Counter({
      name,
      help: 'Recorded transactions submitted again by the scan after their submitter let go of them, by result',
      labelNames: ['result'],
      registers: [registry],
    })
  );
}

const pendingSources = new WeakMap<Registry, () => Promise<PendingSummary | undefined>>();

/**
 * The pending-transaction gauges, read from Redis at scrape time (so every replica reports the same, leader or
 * not): how many recorded transactions have no outcome, and how many finalized blocks the oldest of them has
 * waited since it was signed; a transaction that is not finalized within its mortal era expires.
 */
function registerPendingGauges(registry: Registry, read: () => Promise<PendingSummary | undefined>): void {
  pendingSources.set(registry, read);
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

/**
 * Follows the transactions the services submit. Each one is recorded before it is submitted, with every job
 * riding in it (added to a set, never overwritten); a scanner (run under a leader lease by the service) walks
 * finalized blocks in order, finds recorded transactions by hash, decodes their outcome from the block's
 * events, and settles a record once its mortal era has passed without it. The scan position lives in Redis,
 * so a restart resumes where it stopped and nothing submitted is lost.
 */
export class TransactionTracker {
  private readonly pendingKey: string;
  private readonly scannedKey: string;
  private wake: (() => void) | undefined;
  /** When this scanner last submitted each abandoned transaction again. */
  private readonly resubmittedAt = new Map<string, number>();
  private readonly resubmissions: Counter<'result'> | undefined;

  constructor(
    private readonly api: ApiPromise,
    private readonly redis: RedisClient,
    private readonly options: TrackerOptions,
  ) {
    if (this.resubmitAfterMs <= (options.recordWithinMs ?? 10_000))
      throw new RangeError('resubmitAfterMs must be longer than recordWithinMs (a submitter may still be at work)');
    this.pendingKey = `${options.prefix}:tx:pending`;
    this.scannedKey = `${options.prefix}:tx:scanned`;
    if (options.metrics) {
      registerPendingGauges(options.metrics, () => this.pendingSummary());
      this.resubmissions = resubmissionCounter(options.metrics);
    }
  }

  /** The pending transactions for the gauges (their age unknown until the finalized head is). */
  private async pendingSummary(): Promise<PendingSummary> {
    const births = [...(await this.pending()).values()].map((record) => record.birth);
    if (births.length === 0) return { count: 0, oldestAgeBlocks: 0 };
    const head = this.options.finalizedHead?.() ?? -1;
    if (head < 0) return { count: births.length };
    return { count: births.length, oldestAgeBlocks: Math.max(0, head - Math.min(...births)) };
  }

  private jobsKey(hash: string): string {
    return `${this.options.prefix}:tx:jobs:${hash}`;
  }

  private settledKey(hash: string): string {
    return `${this.options.prefix}:tx:settled:${hash}`;
  }

  private get resubmitAfterMs(): number {
    return this.options.resubmitAfterMs ?? 20_000;
  }

  /**
   * Records a signed transaction and the jobs it carries; call before submitting it. `writes` are the caller's
   * own bookkeeping, written in the same script, so that it and the record exist together or not at all.
   * It resolves only within `recordWithinMs` of its start, and the caller submits right after: the scan
   * submits a recorded transaction again only once it is older than that (`resubmitAfterMs`). Later, this throws
   * RecordTooLateError (the record stays, and the scan submits it).
   *
   * A transaction whose outcome is already settled is not recorded again (a late write would bring its record
   * back, to be settled a second time): this throws TransactionSettledError, and the caller must not submit.
   *
   * With `replicatedWrites` the record is confirmed on a replica before this resolves. A record that cannot be
   * confirmed (no replica answered, or the connection was lost: a failover may have taken it) is written again
   * and confirmed again, until `recordWithinMs`: the transaction is signed and its nonce taken, and giving up
   * leaves a gap in the provider's nonces that holds back its later transactions until the gap is refilled, or
   * the scan submits the recorded transaction, if its record stayed.
   */
  async record(
    transaction: SignedTransaction,
    jobs: string[],
    writes: RecordWrite[] = [],
    claims: readonly RunClaim[] = [],
  ): Promise<void> {
    const trace = currentTraceCarrier();
    const record: PendingRecord = {
      birth: transaction.birth,
      death: transaction.death,
      nonce: transaction.nonce,
      signed: transaction.extrinsic.toHex(),
      signer: transaction.extrinsic.signer.toString(),
      recordedAt: Date.now(),
      // The finalization span continues the submitter's trace, in whichever replica scans the block.
      ...(trace ? { trace } : {}),
    };
    const { hash } = transaction;
    const script = this.scriptArguments('record', hash, JSON.stringify(record), jobs, writes, claims);
    const giveUpAt = Date.now() + (this.options.recordWithinMs ?? 10_000);
    const write = async () => {
      const answer = (await RECORD.run(this.redis, script.keys, script.args)) as number;
      if (answer === 0) throw new TransactionSettledError(hash);
      if (answer < 0) throw new StaleRunError(claims[-answer - 1] as RunClaim);
    };
    const replicated = this.options.replicatedWrites;
    // Written once; with `replicatedWrites`, written and confirmed again until a replica confirmed it.
    const confirmed = async (): Promise<boolean> => {
      if (!replicated) return write().then(() => true);
      const mark = replicated.mark();
      await write();
      try {
        await replicated.confirm(mark);
        return true;
      } catch (error) {
        if (Date.now() >= giveUpAt) throw error;
        return false;
      }
    };
    while (!(await confirmed())) await new Promise((resolve) => setTimeout(resolve, 100));
    // A write held back (Redis away) past the deadline: the scan may be submitting the transaction already.
    if (Date.now() > giveUpAt) throw new RecordTooLateError(hash);
  }

  /**
   * Drops the record of a transaction the node refused at submission (it can never be included), with the
   * caller's own writes, all or nothing, while the run holds `claims` (else StaleRunError, nothing written).
   * Never call it when the submission's fate is unknown (a dropped connection): the scan settles those.
   */
  async forget(txHash: string, writes: RecordWrite[] = [], claims: readonly RunClaim[] = []): Promise<void> {
    const script = this.scriptArguments('forget', txHash, '', [], writes, claims);
    const answer = (await RECORD.run(this.redis, script.keys, script.args)) as number;
    if (answer < 0) throw new StaleRunError(claims[-answer - 1] as RunClaim);
  }

  /** The KEYS and ARGV of recordTransaction.lua. */
  private scriptArguments(
    mode: 'record' | 'forget',
    hash: string,
    record: string,
    jobs: string[],
    writes: readonly RecordWrite[],
    claims: readonly RunClaim[],
  ): { keys: string[]; args: (string | number)[] } {
    const claimed = claimArguments(claims);
    const written = writeArguments(writes);
    return {
      keys: [this.pendingKey, this.jobsKey(hash), this.settledKey(hash), ...claimed.keys, ...written.keys],
      args: [mode, hash, record, jobs.length, ...jobs, claims.length, ...claimed.args, ...written.args],
    };
  }

  /** How many recorded transactions have no outcome yet. */
  async pendingCount(): Promise<number> {
    return this.redis.hlen(this.pendingKey);
  }

  private async target(): Promise<number> {
    const hash = this.options.trustUnfinalized ? undefined : await this.api.rpc.chain.getFinalizedHead();
    return (await this.api.rpc.chain.getHeader(hash)).number.toNumber();
  }

  private async pending(): Promise<Map<string, PendingRecord>> {
    const entries = await this.redis.hgetall(this.pendingKey);
    return new Map(Object.entries(entries).map(([hash, json]) => [hash, JSON.parse(json) as PendingRecord]));
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
        const jobs = await this.redis.smembers(this.jobsKey(outcome.txHash));
        await this.options.onOutcome({ ...outcome, jobs: jobs.sort() } as TransactionOutcome);
      },
    );
    const { txHash } = outcome;
    await this.redis
      .multi()
      .hdel(this.pendingKey, txHash)
      .del(this.jobsKey(txHash))
      .set(this.settledKey(txHash), outcome.status, 'EX', this.options.settledRetentionSeconds ?? 3_600)
      .exec();
  }

  /** Scans every block after the last one scanned up to the finalized (or best) head; returns the last scanned. */
  async scanOnce(): Promise<number> {
    const target = await this.target();
    let pending = await this.pending();
    const stored = await this.redis.get(this.scannedKey);
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
      if ((await ADVANCE.run(this.redis, [this.scannedKey], [next, position])) !== 1)
        throw new ScanPositionMovedError(position, await this.redis.get(this.scannedKey));
      position = String(next);
    }
    await this.resubmitAbandoned(pending, target);
    return next - 1;
  }

  /**
   * Submits again, byte for byte, each recorded transaction older than `resubmitAfterMs`, whose era is still open
   * and whose nonce the node does not count as taken (`system_accountNextIndex`, which counts the pool's ready
   * transactions): its submitter died, or lost Redis, between recording it and submitting it, and left alone it
   * would expire. One in the pool, in a block not yet finalized, or whose nonce another transaction took is left
   * to the scan. Sending the same bytes again is harmless anyway: a pool that has them, or a nonce already used,
   * refuses them. Each is tried once per `resubmitAfterMs`.
   */
  private async resubmitAbandoned(pending: Map<string, PendingRecord>, head: number): Promise<void> {
    const now = Date.now();
    const after = this.resubmitAfterMs;
    const nextIndex = new Map<string, Promise<number>>();
    for (const hash of this.resubmittedAt.keys()) if (!pending.has(hash)) this.resubmittedAt.delete(hash);
    for (const [hash, record] of pending) {
      const { signed, signer } = record;
      if (signed === undefined || signer === undefined || record.death <= head + 1) continue;
      if (now - (record.recordedAt ?? 0) < after || now - (this.resubmittedAt.get(hash) ?? 0) < after) continue;
      if (!nextIndex.has(signer))
        nextIndex.set(
          signer,
          this.api.rpc.system.accountNextIndex(signer).then((index) => index.toNumber()),
        );
      if ((await nextIndex.get(signer)!) > record.nonce) continue;
      this.resubmittedAt.set(hash, now);
      const result = await this.submitAgain(signed);
      this.resubmissions?.inc({ result: result.result });
      const log = { txHash: hash, nonce: record.nonce, result: result.result, reason: result.reason };
      if (result.result === 'submitted') this.options.logger?.info(log, 'abandoned transaction submitted again');
      else this.options.logger?.warn(log, 'abandoned transaction not submitted again');
    }
  }

  private async submitAgain(signed: string): Promise<{ result: ResubmissionResult; reason?: string }> {
    try {
      await this.api.rpc.author.submitExtrinsic(this.api.createType('Extrinsic', signed));
      return { result: 'submitted' };
    } catch (error) {
      const refused = submissionError(error);
      const result = refused.kind === 'rpc' ? 'unreachable' : alreadyImported(refused) ? 'known' : 'refused';
      return { result, reason: refused.message };
    }
  }

  /**
   * Scans every `intervalMs` until `signal` aborts: the loop a service runs under its leader lease
   * (`runAsLeader(options, ({ signal }) => tracker.scanUntil(signal))`), so that one replica scans at a time.
   * A failed scan (the node or Redis away) is reported and retried on the next round; nothing is skipped.
   */
  async scanUntil(
    signal: AbortSignal,
    options: { intervalMs?: number; onError?: (error: unknown) => void } = {},
  ): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.scanOnce();
      } catch (error) {
        options.onError?.(error);
      }
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', wake);
          this.wake = undefined;
          resolve();
        };
        const timer = setTimeout(wake, options.intervalMs ?? 1_000);
        this.wake = wake;
        signal.addEventListener('abort', wake, { once: true });
      });
    }
  }

  /** Ends the wait of `scanUntil` now (call it when a block is finalized, so outcomes arrive without delay). */
  nudge(): void {
    this.wake?.();
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
