import type { ApiPromise } from '@polkadot/api';
import type { RedisClient, RunClaim } from '@frequency-gateway/platform';
import type { SignedTransaction } from '../submitter.js';
import { registerPendingGauges } from './gauges.js';
import { readPending, TrackerKeys, type TrackerOptions } from './records.js';
import { TransactionRecords, type RecordWrite } from './recording.js';
import { Resubmission, resubmissionCounter } from './resubmission.js';
import { Scanning } from './scanning.js';

/**
 * Follows the transactions the services submit. Each one is recorded before it is submitted, with every job
 * riding in it (added to a set, never overwritten); a scanner (run under a leader lease by the service) walks
 * finalized blocks in order, finds recorded transactions by hash, decodes their outcome from the block's
 * events, and settles a record once its mortal era has passed without it. The scan position lives in Redis,
 * so a restart resumes where it stopped and nothing submitted is lost.
 *
 * Its parts: recording (recording.ts), scanning and settling (scanning.ts), going back after a reorganisation
 * with TRUST_UNFINALIZED_BLOCKS (retractions.ts), submitting abandoned transactions again (resubmission.ts) and the
 * pending gauges (gauges.ts).
 */
export class TransactionTracker {
  private readonly keys: TrackerKeys;
  private readonly records: TransactionRecords;
  private readonly scanning: Scanning;
  private wake: (() => void) | undefined;

  constructor(
    api: ApiPromise,
    private readonly redis: RedisClient,
    options: TrackerOptions,
  ) {
    this.keys = new TrackerKeys(options.prefix);
    if (options.metrics)
      registerPendingGauges(options.metrics, () => readPending(redis, this.keys), options.finalizedHead);
    const resubmission = new Resubmission(api, options, options.metrics && resubmissionCounter(options.metrics));
    this.records = new TransactionRecords(redis, this.keys, options);
    this.scanning = new Scanning(api, redis, this.keys, options, resubmission);
  }

  /** Records a signed transaction before it is submitted (see TransactionRecords.record). */
  async record(
    transaction: SignedTransaction,
    jobs: string[],
    writes: RecordWrite[] = [],
    claims: readonly RunClaim[] = [],
  ): Promise<void> {
    return this.records.record(transaction, jobs, writes, claims);
  }

  /** Drops the record of a transaction the node refused at submission (see TransactionRecords.forget). */
  async forget(txHash: string, writes: RecordWrite[] = [], claims: readonly RunClaim[] = []): Promise<void> {
    return this.records.forget(txHash, writes, claims);
  }

  /** How many recorded transactions have no outcome yet. */
  async pendingCount(): Promise<number> {
    return this.redis.hlen(this.keys.pending);
  }

  /**
   * Scans every block after the last one scanned up to the finalized (or best) head; returns the last scanned.
   * `onBlock` is called after each block scanned.
   */
  async scanOnce(onBlock?: () => void): Promise<number> {
    return this.scanning.scanOnce(onBlock);
  }

  /**
   * Scans every `intervalMs` until `signal` aborts: the loop a service runs under its leader lease
   * (`runAsLeader(options, ({ signal }) => tracker.scanUntil(signal))`), so that one replica scans at a time.
   * A failed scan (the node or Redis away) is reported and retried on the next round; nothing is skipped.
   * `afterScan` runs after each scan, under the same lease (the capacity pipeline fills standing nonce gaps there).
   * `onProgress` is called on every turn and after every block scanned: a leader's stall watch.
   */
  async scanUntil(
    signal: AbortSignal,
    options: {
      intervalMs?: number;
      onError?: (error: unknown) => void;
      afterScan?: () => Promise<unknown>;
      onProgress?: () => void;
    } = {},
  ): Promise<void> {
    while (!signal.aborted) {
      options.onProgress?.();
      try {
        await this.scanOnce(options.onProgress);
      } catch (error) {
        options.onError?.(error);
      }
      try {
        await options.afterScan?.();
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
}
