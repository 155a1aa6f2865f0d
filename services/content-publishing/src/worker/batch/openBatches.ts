import { currentTraceCarrier } from '@frequency-gateway/platform';
import type { Counter } from 'prom-client';
import type { ContentKind } from '../../jobs/document.js';
import type { JobHandOff } from '../handOff.js';
import type { BatchBook } from './book.js';
import { closeAfterJoin, closeWhenDue, type CloseOrder } from './closing.js';
import {
  CLOSE_BATCH_JOB,
  type Acceptance,
  type Announcement,
  type BatchDoor,
  type CloseBatchJob,
  type Joined,
  type Withdrawal,
} from '../../jobs/batch.js';

export interface OpenBatchesOptions {
  book: BatchBook;
  /** batchQueue, where the stage's own `close` jobs go. */
  closer: JobHandOff<{ [CLOSE_BATCH_JOB]: CloseBatchJob }>;
  /** BATCH_INTERVAL_SECONDS, in ms: how long a batch stays open after its first row. */
  intervalMs: number;
  /** content_announcements_batched_total. */
  batched: Counter<'type'>;
}

/**
 * The batch stage's door, which the document stage hands its announcements to: a request's row joins the open
 * batch of its schema (and the batch's closing is arranged by the closing rules), or a request that failed is
 * withdrawn before it joins. At start, the timers of open batches are armed again.
 */
export class OpenBatches implements BatchDoor {
  constructor(private readonly options: OpenBatchesOptions) {}

  async join(
    schemaId: number,
    request: Acceptance & { kind: ContentKind },
    announcement: Announcement,
  ): Promise<Joined> {
    // Joining runs in the request's own job span: the batch's span links to it.
    const joined = await this.options.book.join(schemaId, request, announcement, currentTraceCarrier());
    if (joined.outcome === 'joined') this.options.batched.inc({ type: request.kind });
    const order = closeAfterJoin(joined, this.options.intervalMs, Date.now());
    if (order) await this.arrange(order);
    return joined;
  }

  withdraw(request: Acceptance): Promise<Withdrawal> {
    return this.options.book.withdraw(request);
  }

  /** Arms the timers of open batches again (a batch opened just before a crash may have none); how many. */
  async rearm(): Promise<number> {
    const open = await this.options.book.open();
    for (const batch of open) await this.arrange(closeWhenDue(batch, this.options.intervalMs, Date.now()));
    return open.length;
  }

  private async arrange({ batchId, schemaId, jobId, delayMs }: CloseOrder): Promise<void> {
    await this.options.closer.add(CLOSE_BATCH_JOB, { batchId, schemaId }, { jobId, delay: delayMs });
  }
}
