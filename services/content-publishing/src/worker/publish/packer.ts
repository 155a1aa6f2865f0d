import {
  submitRecorded,
  SubmissionError,
  type CapacitySubmitter,
  type SignedTransaction,
} from '@frequency-gateway/chain';
import { holdsClaim, StaleRunError, type Logger, type RedisClient, type RunClaim } from '@frequency-gateway/platform';
import type { Counter, Histogram } from 'prom-client';
import { nextPack, sendsAtOnce, type ParcelShape } from './packing.js';
import type { MessageWrites } from './publications.js';

/** A runtime call, as the submitter takes it (the chain client's type stays in shared/chain). */
export type MessageCall = Parameters<CapacitySubmitter['submit']>[0][number];

/** Calls that travel together in one transaction (all or nothing). */
export interface Parcel {
  /** What the tracker settles, one per call. */
  messageIds: string[];
  calls: MessageCall[];
  /** Travels in a transaction of its own. */
  solo: boolean;
  /** The claim of the job run that sends it (its publication's): a stale run's parcel is never recorded. */
  claim: RunClaim;
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
  submissions: MessageWrites;
  /** Where the parcels' claims are held. */
  redis: RedisClient;
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

  /**
   * Records and submits one transaction for a pack, all of whose runs must still hold their claims: parcels of
   * stale runs are turned away first (StaleRunError), and should a claim be lost between that check and the
   * record (which checks again, atomically), the others are packed again.
   */
  private async submit(pack: Waiting[]): Promise<void> {
    const held = await this.heldOnly(pack);
    if (held.length === 0) return;
    const calls = held.flatMap((entry) => entry.parcel.calls);
    const messageIds = held.flatMap((entry) => entry.parcel.messageIds);
    const { submissions, transactions, callsPerTransaction, logger } = this.options;
    try {
      const submission = await submitRecorded((beforeSubmit) => this.submitter.submit(calls, beforeSubmit), {
        tracker: submissions.tracker,
        jobs: messageIds,
        writes: (signed) => submissions.submitted(signed.hash, messageIds),
        undo: submissions.unsent(messageIds),
        claims: held.map((entry) => entry.parcel.claim),
      });
      if (submission.kind === 'tracked') {
        // Recorded too late to submit now, settled already, or sent without an answer: the tracker tells.
        transactions.inc({ outcome: 'unknown' });
        logger.warn({ err: submission.cause, calls: calls.length, txHash: submission.txHash }, 'left to the tracker');
        for (const entry of held) entry.reject(new SubmissionUnknownError(submission.txHash, submission.cause));
        return;
      }
      transactions.inc({ outcome: 'submitted' });
      callsPerTransaction.observe(calls.length);
      for (const entry of held) entry.resolve(submission.transaction);
    } catch (error) {
      if (error instanceof StaleRunError) {
        // Nothing was recorded: the parcels of runs that still hold their claims go in the next transaction.
        this.waiting.unshift(...held);
        return;
      }
      // Refused by the node (forgotten: its messages go again), or failed before it was recorded.
      transactions.inc({ outcome: error instanceof SubmissionError && error.kind !== 'rpc' ? 'refused' : 'unknown' });
      logger.warn({ err: error, calls: calls.length }, 'transaction not submitted');
      for (const entry of held) entry.reject(error);
    }
  }

  /** The entries whose runs still hold their claims; the others are turned away with StaleRunError. */
  private async heldOnly(pack: Waiting[]): Promise<Waiting[]> {
    const holds = await Promise.all(pack.map((entry) => holdsClaim(this.options.redis, entry.parcel.claim)));
    for (const [index, entry] of pack.entries()) if (!holds[index]) entry.reject(new StaleRunError(entry.parcel.claim));
    return pack.filter((_, index) => holds[index]);
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
