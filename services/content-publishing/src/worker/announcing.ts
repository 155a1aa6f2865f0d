import { INTENT_OF_ANNOUNCEMENT, parseParquetModel, writeBatch } from '@frequency-gateway/dsnp';
import type { Job, JobContext, RequestStatusStore } from '@frequency-gateway/platform';
import { contentId, type ContentStore, type StoredContent } from '@frequency-gateway/storage';
import type { Queue } from 'bullmq';
import { Counter, Histogram, type Registry } from 'prom-client';
import type { SchemaDirectory } from '@frequency-gateway/chain';
import type { ContentRequestJob } from '../jobs.js';
import type { BatchBook } from './batches.js';
import { ANNOUNCEMENT_OF_KIND, toParquetRow, type ContentBuilder } from './content.js';
import { inBatches } from './outcomes.js';
import { ANNOUNCEMENT_BATCH_JOB, type AnnouncementBatchJob } from './publisher.js';

/** batchQueue job `close`: close a batch (when its interval is up, or at once when it is full) and write it. */
export interface CloseBatchJob {
  batchId: string;
  schemaId: number;
}

export const CLOSE_BATCH_JOB = 'close';

/** Documents stored per IPFS call (a batch of BATCH_MAX_COUNT rows may carry that many). */
const DOCUMENTS_PER_CALL = 500;

/** Thrown while the chain has no schema for an announcement type (the job is retried). */
export class NoSchemaError extends Error {
  constructor(intent: string) {
    super(`the chain has no schema for intent ${intent}`);
    this.name = 'NoSchemaError';
  }
}

export interface AnnouncingOptions {
  builder: ContentBuilder;
  book: BatchBook;
  directory: SchemaDirectory;
  store: ContentStore;
  status: RequestStatusStore;
  batchQueue: Queue<CloseBatchJob>;
  publishQueue: Queue<AnnouncementBatchJob>;
  /** BATCH_INTERVAL_SECONDS, in ms: how long a batch stays open after its first row. */
  intervalMs: number;
  metrics: Registry;
}

const CLOSE_JOB_OPTIONS = {
  attempts: 10,
  backoff: { type: 'exponential', delay: 1_000 },
  removeOnComplete: { age: 24 * 3600, count: 1_000 },
  removeOnFail: { age: 7 * 24 * 3600 },
};

/**
 * From accepted requests to announcement batch files: each request becomes its announcement (and its
 * ActivityStreams document in IPFS) and joins the open batch of the announcement type's latest schema; a
 * batch closes when full or when its interval is up (a delayed job, so the timer survives restarts and is
 * run by one worker), and a closed batch becomes one Parquet file in IPFS and one publish job.
 */
export class Announcing {
  private readonly rows: Counter<'type'>;
  private readonly batchRows: Histogram;

  constructor(private readonly options: AnnouncingOptions) {
    this.rows = new Counter({
      name: 'content_announcements_batched_total',
      help: 'Announcements added to batches, by announcement type',
      labelNames: ['type'],
      registers: [options.metrics],
    });
    this.batchRows = new Histogram({
      name: 'content_batch_rows',
      help: 'Rows in each announcement batch file written',
      buckets: [1, 10, 50, 100, 250, 500, 1000, 2500, 5000, 10000],
      registers: [options.metrics],
    });
  }

  /** requestQueue processor. */
  async processRequest(job: Job<ContentRequestJob>, { log }: JobContext): Promise<{ batchId: string }> {
    const { referenceId, kind } = job.data;
    await this.options.status.update(referenceId, 'processing');
    const announcement = await this.options.builder.build(job.data);
    const intent = INTENT_OF_ANNOUNCEMENT[ANNOUNCEMENT_OF_KIND[kind]];
    const schemaId = (await this.options.directory.intentByName(intent))?.latestSchemaId;
    if (schemaId === undefined) throw new NoSchemaError(intent);
    const joined = await this.options.book.join(schemaId, referenceId, announcement);
    if (joined.rows > 0) this.rows.inc({ type: kind });
    const close = { batchId: joined.batchId, schemaId };
    if (joined.closed) {
      await this.options.batchQueue.add(CLOSE_BATCH_JOB, close, {
        ...CLOSE_JOB_OPTIONS,
        jobId: `full-${joined.batchId}`,
      });
    } else if (joined.rows === 1 || joined.rows === -1) {
      // The first row arms the batch's timer; a retried job arms it again in case it was lost (same job id).
      const delay = Math.max(0, (joined.openedAt || Date.now()) + this.options.intervalMs - Date.now());
      await this.armTimer(close, delay);
    }
    log.debug({ referenceId, batchId: joined.batchId, rows: joined.rows }, 'announcement batched');
    return { batchId: joined.batchId };
  }

  private async armTimer(close: CloseBatchJob, delay: number): Promise<void> {
    await this.options.batchQueue.add(CLOSE_BATCH_JOB, close, {
      ...CLOSE_JOB_OPTIONS,
      jobId: `due-${close.batchId}`,
      delay,
    });
  }

  /** Re-arms the timers of open batches (at start: a batch opened just before a crash may have none). */
  async rearm(): Promise<number> {
    const open = await this.options.book.open();
    for (const batch of open)
      await this.armTimer(batch, Math.max(0, batch.openedAt + this.options.intervalMs - Date.now()));
    return open.length;
  }

  /**
   * Stores the batch's ActivityStreams documents in IPFS, all in one call, before the batch file that points
   * at them. Each must get the CID its row names (worked out when the row was made).
   */
  private async storeDocuments(documents: string[]): Promise<void> {
    const bytes = documents.map((document) => new TextEncoder().encode(document));
    const stored: StoredContent[] = [];
    for (let at = 0; at < bytes.length; at += DOCUMENTS_PER_CALL)
      stored.push(...(await this.options.store.addAll(bytes.slice(at, at + DOCUMENTS_PER_CALL))));
    for (const [index, content] of bytes.entries()) {
      const expected = await contentId(content);
      if (stored[index]?.cid !== expected)
        throw new Error(
          `IPFS stored a document as ${stored[index]?.cid}, not as ${expected}; check its import settings`,
        );
    }
  }

  /** batchQueue processor: closes the batch, writes its Parquet file, and queues its publication. */
  async processClose(job: Job<CloseBatchJob>, { log }: JobContext): Promise<{ cid: string; rows: number } | undefined> {
    const { batchId, schemaId } = job.data;
    const batch = await this.options.book.close(batchId, schemaId);
    if (!batch) return undefined;
    if (batch.rows.length === 0) {
      await this.options.book.clear(batchId);
      return undefined;
    }
    const schema = await this.options.directory.schema(schemaId);
    if (!schema) throw new Error(`schema ${schemaId} is not on chain`);
    await this.storeDocuments(batch.documents);
    const file = await writeBatch(
      parseParquetModel(schema.model),
      batch.rows.map(([, row]) => toParquetRow(row)),
    );
    const stored = await this.options.store.add(file);
    const referenceIds = batch.rows.map(([referenceId]) => referenceId);
    // Requests show their batch before the publication can move them on.
    await inBatches(referenceIds, 200, (referenceId) =>
      this.options.status.update(referenceId, 'batched', { batch: { cid: stored.cid, schemaId } }),
    );
    await this.options.publishQueue.add(
      ANNOUNCEMENT_BATCH_JOB,
      { batchId, schemaId, cid: stored.cid, size: stored.size, referenceIds },
      {
        jobId: `batch-${batchId}`,
        attempts: 10,
        backoff: { type: 'exponential', delay: 2_000 },
        removeOnComplete: { age: 24 * 3600, count: 1_000 },
        removeOnFail: { age: 7 * 24 * 3600 },
      },
    );
    await this.options.book.clear(batchId);
    this.batchRows.observe(batch.rows.length);
    log.info({ batchId, schemaId, cid: stored.cid, rows: batch.rows.length, bytes: stored.size }, 'batch written');
    return { cid: stored.cid, rows: batch.rows.length };
  }
}
