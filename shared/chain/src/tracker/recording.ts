import {
  claimArguments,
  currentTraceCarrier,
  RedisScript,
  StaleRunError,
  type RedisClient,
  type RunClaim,
} from '@frequency-gateway/platform';
import type { SignedTransaction } from '../submitter.js';
import { ChainTiming } from '../timing.js';
import type { PendingRecord, TrackerKeys, TrackerOptions } from './records.js';

const RECORD = RedisScript.fromFile(new URL('./recordTransaction.lua', import.meta.url));

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

/** The submitters' side of the tracker: a transaction recorded before it is submitted, or forgotten once refused. */
export class TransactionRecords {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: TrackerKeys,
    private readonly options: Pick<TrackerOptions, 'replicatedWrites' | 'timing'>,
  ) {}

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
   *
   * With `claims`, nothing is written unless the job run still holds every one: a run that lost one to a later
   * run of its job gets StaleRunError and must not submit.
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
      signedFor: transaction.signedFor,
      recordedAt: Date.now(),
      // The finalization span continues the submitter's trace, in whichever replica scans the block.
      ...(trace ? { trace } : {}),
    };
    const { hash } = transaction;
    const script = this.scriptArguments('record', hash, JSON.stringify(record), jobs, writes, claims);
    const giveUpAt = Date.now() + (this.options.timing ?? ChainTiming.DEFAULT).recordWithinMs;
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
      keys: [this.keys.pending, this.keys.jobs(hash), this.keys.settled(hash), ...claimed.keys, ...written.keys],
      args: [mode, hash, record, jobs.length, ...jobs, claims.length, ...claimed.args, ...written.args],
    };
  }
}
