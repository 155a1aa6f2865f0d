import {
  SubmissionError,
  type CapacitySubmitter,
  type SignedTransaction,
  type TransactionTracker,
} from '@frequency-gateway/chain';
import type { Logger } from '@frequency-gateway/platform';
import type { Call } from '@polkadot/types/interfaces';
import type { ChainableCommander } from 'ioredis';
import { Counter, Histogram, type Registry } from 'prom-client';

/** Calls that travel together in one transaction (all or nothing), with what to record about them. */
export interface Parcel {
  /** What the tracker settles, one per call. */
  messageIds: string[];
  calls: Call[];
  /** Travels in a transaction of its own. */
  solo: boolean;
  /** The caller's bookkeeping, written with the tracker's record (or undone when the node refuses). */
  record(multi: ChainableCommander, txHash: string): void;
  unrecord(multi: ChainableCommander): void;
}

interface Waiting {
  parcel: Parcel;
  resolve(transaction: SignedTransaction): void;
  reject(error: unknown): void;
}

export interface PackerOptions {
  /** How long the first waiting parcel waits for company before its transaction goes. */
  windowMs: number;
  logger: Logger;
  metrics: Registry;
}

/**
 * Packs the calls of concurrent publish jobs into capacity-paid transactions: up to the chain's maximum per
 * `payWithCapacityBatchAll`, sent as soon as a transaction is full or the window has passed. Transactions are
 * signed and submitted one after another (nonces in order) without waiting for inclusion, so many are in
 * flight at once. Each transaction is recorded with the tracker before it is submitted.
 */
export class Packer {
  private waiting: Waiting[] = [];
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<void> = Promise.resolve();
  private readonly transactions: Counter<'outcome'>;
  private readonly callsPerTransaction: Histogram;

  constructor(
    private readonly submitter: CapacitySubmitter,
    private readonly tracker: TransactionTracker,
    private readonly options: PackerOptions,
  ) {
    const registers = [options.metrics];
    this.transactions = new Counter({
      name: 'content_publish_transactions_total',
      help: 'Capacity transactions submitted by the publisher, by outcome of the submission',
      labelNames: ['outcome'],
      registers,
    });
    this.callsPerTransaction = new Histogram({
      name: 'content_publish_calls_per_transaction',
      help: 'Messages packed in each submitted transaction',
      buckets: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 50],
      registers,
    });
  }

  /** Resolves with the transaction once the node accepted it into its pool. */
  send(parcel: Parcel): Promise<SignedTransaction> {
    if (parcel.calls.length > this.submitter.maxBatch)
      throw new RangeError(`a parcel of ${parcel.calls.length} calls exceeds ${this.submitter.maxBatch}`);
    return new Promise((resolve, reject) => {
      this.waiting.push({ parcel, resolve, reject });
      const calls = this.waiting.reduce((sum, entry) => sum + entry.parcel.calls.length, 0);
      if (calls >= this.submitter.maxBatch || parcel.solo) this.flushSoon(0);
      else this.flushSoon(this.options.windowMs);
    });
  }

  private flushSoon(delayMs: number): void {
    if (this.timer && delayMs > 0) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.sending = this.sending.then(() => this.flush());
    }, delayMs);
  }

  /** Takes the next transaction's worth of parcels: a solo parcel alone, others up to the maximum. */
  private nextPack(): Waiting[] {
    const first = this.waiting.shift();
    if (!first) return [];
    const pack = [first];
    if (first.parcel.solo) return pack;
    let calls = first.parcel.calls.length;
    for (let index = 0; index < this.waiting.length;) {
      const candidate = this.waiting[index] as Waiting;
      if (!candidate.parcel.solo && calls + candidate.parcel.calls.length <= this.submitter.maxBatch) {
        pack.push(candidate);
        calls += candidate.parcel.calls.length;
        this.waiting.splice(index, 1);
      } else index++;
    }
    return pack;
  }

  private async flush(): Promise<void> {
    for (let pack = this.nextPack(); pack.length > 0; pack = this.nextPack()) await this.submit(pack);
  }

  private async submit(pack: Waiting[]): Promise<void> {
    const parcels = pack.map((entry) => entry.parcel);
    const calls = parcels.flatMap((parcel) => parcel.calls);
    const messageIds = parcels.flatMap((parcel) => parcel.messageIds);
    let recorded: string | undefined;
    try {
      const transaction = await this.submitter.submit(calls, async (signed) => {
        await this.tracker.record(signed, messageIds, (multi) => {
          for (const parcel of parcels) parcel.record(multi, signed.hash);
        });
        recorded = signed.hash;
      });
      this.transactions.inc({ outcome: 'submitted' });
      this.callsPerTransaction.observe(calls.length);
      for (const entry of pack) entry.resolve(transaction);
    } catch (error) {
      // A refusal by the node is final for that transaction: forget it, so its messages go again. Anything
      // else (a dropped connection) leaves its fate unknown: it stays recorded and the tracker settles it.
      const refused = error instanceof SubmissionError && error.kind !== 'rpc';
      this.transactions.inc({ outcome: refused ? 'refused' : 'unknown' });
      if (recorded && refused) {
        await this.tracker
          .forget(recorded, (multi) => {
            for (const parcel of parcels) parcel.unrecord(multi);
          })
          .catch((cleanup: unknown) =>
            this.options.logger.warn({ err: cleanup }, 'could not forget a refused transaction'),
          );
      }
      this.options.logger.warn({ err: error, calls: calls.length, txHash: recorded }, 'transaction not submitted');
      for (const entry of pack)
        entry.reject(recorded && !refused ? new SubmissionUnknownError(recorded, error) : error);
    }
  }

  close(): void {
    clearTimeout(this.timer);
    for (const entry of this.waiting.splice(0)) entry.reject(new Error('the publisher is stopping'));
  }
}

/** The submission may or may not have reached the node; the tracker will tell. */
export class SubmissionUnknownError extends Error {
  constructor(
    readonly txHash: string,
    cause: unknown,
  ) {
    super(`submission of ${txHash} did not complete; its outcome will be read from the chain`, { cause });
    this.name = 'SubmissionUnknownError';
  }
}
