import type { SchemaDirectory } from '@frequency-gateway/chain';
import { parseParquetModel, writeBatch } from '@frequency-gateway/dsnp';
import { linkActiveSpan, type Job, type JobContext } from '@frequency-gateway/platform';
import { contentId, type ContentStore, type StoredContent } from '@frequency-gateway/storage';
import type { Histogram } from 'prom-client';
import type { JobHandOff } from '../handOff.js';
import { PUBLISH_JOB_NAMES, type PublishJobs } from '../../jobs/publish.js';
import type { RequestRecords } from '../requestRecords.js';
import type { BatchBook } from './book.js';
import type { AnnouncementRow, CloseBatchJob } from '../../jobs/batch.js';

/** Documents stored per IPFS call (a batch of BATCH_MAX_COUNT rows may carry that many). */
const DOCUMENTS_PER_CALL = 500;

/** A row as the Parquet writer takes it: the user id an integer again (it waits in Redis as decimal text). */
const parquetRow = (row: AnnouncementRow): Record<string, unknown> => ({ ...row, fromId: BigInt(row.fromId) });

export interface BatchWriterOptions {
  book: BatchBook;
  directory: SchemaDirectory;
  store: ContentStore;
  records: RequestRecords;
  /** publishQueue, where a written batch goes as a `batch` job. */
  publisher: JobHandOff<Pick<PublishJobs, 'batch'>>;
  /** content_batch_rows. */
  batchRows: Histogram;
}

/**
 * The batchQueue processor: closes a batch, stores its ActivityStreams documents in IPFS, writes its rows as one
 * Parquet file in the schema's model, marks its requests batched and hands the file to the publish stage. Closing
 * is atomic and writing idempotent (the rows sorted, the file the same whoever writes it), so a job run twice
 * publishes once: the publish job's id is the batch's.
 */
export class BatchWriter {
  constructor(private readonly options: BatchWriterOptions) {}

  async process(job: Job<CloseBatchJob>, { log }: JobContext): Promise<{ cid: string; rows: number } | undefined> {
    const { batchId, schemaId } = job.data;
    const { book, directory, store, records, publisher } = this.options;
    const batch = await book.close(batchId, schemaId);
    if (!batch) return undefined;
    // The batch's job belongs to the trace of the request that opened it; every member's trace links here.
    linkActiveSpan(batch.traces);
    if (batch.rows.length === 0) {
      await book.clear(batchId);
      return undefined;
    }
    const schema = await directory.schema(schemaId);
    if (!schema) throw new Error(`schema ${schemaId} is not on chain`);
    await this.storeDocuments(batch.documents);
    const file = await writeBatch(
      parseParquetModel(schema.model),
      batch.rows.map(([, row]) => parquetRow(row)),
    );
    const stored = await store.add(file);
    const referenceIds = batch.rows.map(([referenceId]) => referenceId);
    // Requests show their batch before the publication can move them on.
    await records.batched(referenceIds, { cid: stored.cid, schemaId });
    await publisher.add(
      PUBLISH_JOB_NAMES.announcementBatch,
      {
        batchId,
        schemaId,
        cid: stored.cid,
        size: stored.size,
        referenceIds,
        ...(batch.traces.length > 0 ? { memberTraces: batch.traces } : {}),
      },
      { jobId: `batch-${batchId}` },
    );
    await book.clear(batchId);
    this.options.batchRows.observe(batch.rows.length);
    log.info({ batchId, schemaId, cid: stored.cid, rows: batch.rows.length, bytes: stored.size }, 'batch written');
    return { cid: stored.cid, rows: batch.rows.length };
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
}
