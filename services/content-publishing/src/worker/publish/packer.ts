import {
  RecordTooLateError,
  SubmissionError,
  TransactionSettledError,
  type CapacitySubmitter,
  type SignedTransaction,
} from '@frequency-gateway/chain';
import type { Logger } from '@frequency-gateway/platform';
import type { Counter, Histogram } from 'prom-client';
import { nextPack, sendsAtOnce, type ParcelShape } from './packing.js';
import type { SubmissionRecorder } from './publications.js';

/** A runtime call, as the submitter takes it (the chain client's type stays in shared/chain). */
export type MessageCall = Parameters<CapacitySubmitter['submit']>[0][number];

/** Calls that travel together in one transaction (all or nothing). */
export interface Parcel {
  /** What the tracker settles, one per call. */
  messageIds: string[];
  calls: MessageCall[];
  /** Travels in a transaction of its own. */
  solo: boolean;
}

interface Waiting {
  parcel: Parcel;
  resolve(transaction: SignedTransaction): void;
  reject(error: unknown): void;
}

export interface PackerOptions {
  /** How long the first waiting parcel waits for company before its transaction goes. */
  windowMs: number;
  /** Where each transaction is recorded before it is submitted. */
  submissions: SubmissionRecorder;
  logger: Logger;
  /** content_publish_transactions_total and content_publish_calls_per_transaction. */
  transactions: Counter<'outcome'>;
  callsPerTransaction: Histogram;
}

/**
 * Packs the calls of concurrent publish jobs into capacity-paid transactions: up to the chain's maximum per
 * `payWithCapacityBatchAll`, sent as soon as a transaction is full or the window has passed (packing.ts decides
 * which parcels go together). Transactions are signed and submitted one after another (nonces in order) without
 * waiting for inclusion, so many are in flight at once. Each transaction is recorded before it is submitted.
 */
export class Packer {
  private waiting: Waiting[] = [];
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<void> = Promise.resolve();

  constructor(
    private readonly submitter: CapacitySubmitter,
    private readonly options: PackerOptions,
  ) {}

  /** Resolves with the transaction once the node accepted it into its pool. */
  send(parcel: Parcel): Promise<SignedTransaction> {
    if (parcel.calls.length > this.submitter.maxBatch)
      throw new RangeError(`a parcel of ${parcel.calls.length} calls exceeds ${this.submitter.maxBatch}`);
    return new Promise((resolve, reject) => {
      this.waiting.push({ parcel, resolve, reject });
      this.flushSoon(sendsAtOnce(this.shapes(), this.submitter.maxBatch) ? 0 : this.options.windowMs);
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

  private shapes(): ParcelShape[] {
    return this.waiting.map(({ parcel }) => ({ calls: parcel.calls.length, solo: parcel.solo }));
  }

  /** Takes the next transaction's worth of parcels out of the waiting ones. */
  private nextPack(): Waiting[] {
    const taken = new Set(nextPack(this.shapes(), this.submitter.maxBatch));
    const pack = this.waiting.filter((_, index) => taken.has(index));
    this.waiting = this.waiting.filter((_, index) => !taken.has(index));
    return pack;
  }

  private async flush(): Promise<void> {
    for (let pack = this.nextPack(); pack.length > 0; pack = this.nextPack()) await this.submit(pack);
  }

  private async submit(pack: Waiting[]): Promise<void> {
    const calls = pack.flatMap((entry) => entry.parcel.calls);
    const messageIds = pack.flatMap((entry) => entry.parcel.messageIds);
    const { submissions, transactions, callsPerTransaction, logger } = this.options;
    let recorded: string | undefined;
    try {
      const transaction = await this.submitter.submit(calls, async (signed) => {
        await submissions.record(signed, messageIds);
        recorded = signed.hash;
      });
      transactions.inc({ outcome: 'submitted' });
      callsPerTransaction.observe(calls.length);
      for (const entry of pack) entry.resolve(transaction);
    } catch (error) {
      // Recorded too late to submit now (Redis away: the tracker's scan submits it), or settled already (this
      // batch was packed twice at once): its fate is the tracker's.
      if (error instanceof RecordTooLateError || error instanceof TransactionSettledError) recorded = error.txHash;
      // A refusal by the node is final for that transaction: forget it, so its messages go again. Anything
      // else (a dropped connection) leaves its fate unknown: it stays recorded and the tracker settles it.
      const refused = error instanceof SubmissionError && error.kind !== 'rpc';
      transactions.inc({ outcome: refused ? 'refused' : 'unknown' });
      if (recorded && refused) {
        await submissions
          .forget(recorded, messageIds)
          .catch((cleanup: unknown) => logger.warn({ err: cleanup }, 'could not forget a refused transaction'));
      }
      logger.warn({ err: error, calls: calls.length, txHash: recorded }, 'transaction not submitted');
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
