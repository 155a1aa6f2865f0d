import { chainErrorText, type CapacityMonitor, type TransactionOutcome } from '@frequency-gateway/chain';
import type { Logger, RequestStatusStore } from '@frequency-gateway/platform';
import type { Queue } from 'bullmq';
import { Counter, type Registry } from 'prom-client';
import type { OutcomeNotifier } from './notifier.js';
import {
  parseMessageId,
  type MessageState,
  type Publication,
  type PublicationBook,
  type PublicationRecord,
  type PublishError,
} from './publications.js';

/** Chain errors after which the same messages may succeed later: the block was full. */
const RETRIABLE = new Set(['messages.TooManyMessagesInBlock']);

/** publishQueue job `retry`: publish the pending messages of a publication again. */
export interface RetryJob {
  publicationId: string;
}

export const RETRY_JOB = 'retry';

export interface OutcomesOptions {
  book: PublicationBook;
  status: RequestStatusStore;
  notifier: OutcomeNotifier;
  publishQueue: Queue;
  capacity?: CapacityMonitor;
  /** Re-submissions after retriable failures or expiry before a request fails. */
  maxAttempts: number;
  /** Delay before going again after a full block. */
  retryDelayMs: number;
  /** Requests of a failed announcement batch may be posted again: their batch memberships are dropped. */
  forgetMemberships(referenceIds: string[]): Promise<void>;
  logger: Logger;
  metrics: Registry;
}

/** Runs `task` over `items`, at most `limit` at a time. */
export async function inBatches<T>(items: T[], limit: number, task: (item: T) => Promise<unknown>): Promise<void> {
  for (let start = 0; start < items.length; start += limit)
    await Promise.all(items.slice(start, start + limit).map(task));
}

/**
 * Where requests end. Transaction outcomes from the tracker move each message of a publication along;
 * when all are in finalized blocks the requests are finalized, when one cannot be published they fail, and
 * retriable failures (a full block, an expired era, a packed transaction that failed for one of its
 * messages) send the pending messages again, a bounded number of times. Every final state is written to
 * the request record and notified by webhook.
 */
export class Outcomes {
  private readonly finished: Counter<'outcome'>;

  constructor(private readonly options: OutcomesOptions) {
    this.finished = new Counter({
      name: 'content_requests_finished_total',
      help: 'Publishing requests that reached a final state, by state',
      labelNames: ['outcome'],
      registers: [options.metrics],
    });
  }

  /** The tracker's handler: applies one transaction's outcome to every message that rode in it. */
  async settle(outcome: TransactionOutcome): Promise<void> {
    if (this.options.capacity && outcome.status !== 'expired') {
      // What this transaction spent may reach the service's limit: check now, not at the next ledger change.
      await this.options.capacity.recordOutcome(outcome);
      await this.options.capacity.check();
    }
    const byPublication = new Map<string, number[]>();
    for (const id of outcome.jobs) {
      const { publicationId, index } = parseMessageId(id);
      byPublication.set(publicationId, [...(byPublication.get(publicationId) ?? []), index]);
    }
    const packed = outcome.jobs.length > 1;
    for (const [publicationId, indices] of byPublication) {
      const record = await this.options.book.get(publicationId);
      if (record) await this.apply(record, indices, outcome, packed);
    }
  }

  private async apply(
    record: PublicationRecord,
    indices: number[],
    outcome: TransactionOutcome,
    packed: boolean,
  ): Promise<void> {
    const { publication } = record;
    const changes = new Map<number, MessageState>();
    const solo: number[] = [];
    let counted = false;
    let lastError: PublishError | undefined;
    for (const index of indices) {
      const current = record.messages[index];
      // Only the transaction the message last went in counts (an earlier attempt may expire later).
      if (current?.state !== 'submitted' || current.txHash !== outcome.txHash) continue;
      if (outcome.status === 'succeeded') {
        changes.set(index, {
          state: 'finalized',
          txHash: outcome.txHash,
          blockNumber: outcome.blockNumber,
          blockHash: outcome.blockHash,
        });
      } else if (outcome.status === 'expired') {
        changes.set(index, { state: 'pending' });
        counted = true;
        lastError = { message: 'the transaction expired before it was included', expired: true };
      } else if (RETRIABLE.has(chainErrorText(outcome.error))) {
        changes.set(index, { state: 'pending' });
        counted = true;
        lastError = outcome.error;
      } else if (packed && !record.solo.has(index)) {
        // batch_all fails as a whole: send each message alone to find the one the chain refuses.
        changes.set(index, { state: 'pending' });
        solo.push(index);
      } else {
        changes.set(index, { state: 'failed', error: outcome.error });
      }
    }
    if (changes.size === 0) return;
    const attempts = record.attempts + (counted ? 1 : 0);
    if (attempts > this.options.maxAttempts && lastError) {
      for (const [index, state] of changes)
        if (state.state === 'pending') changes.set(index, { state: 'failed', error: lastError });
    }
    await this.options.book.set(publication.id, changes, { attempts, solo });
    const messages = record.messages.map((state, index) => changes.get(index) ?? state);
    await this.conclude(publication, messages, attempts, outcome);
  }

  /** Finalizes, fails, or sends again what is pending, from the states of all messages of a publication. */
  private async conclude(
    publication: Publication,
    messages: MessageState[],
    attempts: number,
    outcome: TransactionOutcome,
  ): Promise<void> {
    const failed = messages.find((state) => state.state === 'failed');
    if (failed?.state === 'failed') {
      const submitted = outcome.status === 'expired' ? {} : { txHash: outcome.txHash, blockHash: outcome.blockHash };
      return this.fail(publication, failed.error, submitted);
    }
    if (messages.every((state) => state.state === 'finalized')) return this.finalize(publication, messages);
    if (messages.some((state) => state.state === 'pending')) {
      const delay = outcome.status === 'failed' ? this.options.retryDelayMs : 0;
      await this.options.publishQueue.add(RETRY_JOB, { publicationId: publication.id } satisfies RetryJob, {
        jobId: `${publication.id}~${outcome.txHash.slice(2, 18)}`,
        delay,
        attempts: 5,
        backoff: { type: 'exponential', delay: 2_000 },
      });
      this.options.logger.info(
        { publicationId: publication.id, attempts, txHash: outcome.txHash, outcome: outcome.status },
        'publishing again',
      );
    }
  }

  private async finalize(publication: Publication, messages: MessageState[]): Promise<void> {
    const last = messages.reduce<MessageState | undefined>(
      (latest, state) =>
        state.state === 'finalized' && (latest?.state !== 'finalized' || state.blockNumber > latest.blockNumber)
          ? state
          : latest,
      undefined,
    );
    if (last?.state !== 'finalized') return;
    const block = { number: last.blockNumber, hash: last.blockHash };
    await inBatches(publication.referenceIds, 200, (referenceId) =>
      this.options.status.update(referenceId, 'finalized', { transaction: { hash: last.txHash }, block }),
    );
    this.finished.inc({ outcome: 'finalized' }, publication.referenceIds.length);
    await this.options.notifier.notify(publication, publication.referenceIds, 'SUCCESS', {
      txHash: last.txHash,
      blockHash: last.blockHash,
      blockNumber: last.blockNumber,
    });
    this.options.logger.info(
      { publicationId: publication.id, requests: publication.referenceIds.length, block: last.blockNumber },
      'finalized',
    );
  }

  /** Fails every request of a publication (or the given ones) with the reason, and notifies. */
  async fail(
    publication: Pick<Publication, 'id' | 'transactionType' | 'messages' | 'msaId' | 'referenceIds' | 'batchId'>,
    error: PublishError,
    transaction: { txHash?: string; blockHash?: string } = {},
  ): Promise<void> {
    const { referenceIds } = publication;
    await inBatches(referenceIds, 200, (referenceId) => this.options.status.update(referenceId, 'failed', { error }));
    if (publication.batchId) await this.options.forgetMemberships(referenceIds);
    this.finished.inc({ outcome: 'failed' }, referenceIds.length);
    await this.options.notifier.notify(publication, referenceIds, error.expired ? 'EXPIRED' : 'FAILED', {
      ...transaction,
      error,
    });
    this.options.logger.warn({ publicationId: publication.id, requests: referenceIds.length, error }, 'failed');
  }
}
