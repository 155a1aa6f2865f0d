import type { SchemaDirectory } from '@frequency-gateway/chain';
import { parseParquetModel, writeBatchRows, type ParquetModel } from '@frequency-gateway/dsnp';
import { linkActiveSpan, type Job, type JobContext, type Logger } from '@frequency-gateway/platform';
import { contentId, type ContentStore, type StoredContent } from '@frequency-gateway/storage';
import type { Histogram } from 'prom-client';
import type { JobHandOff } from '../handOff.js';
import { PUBLISH_JOB_NAMES, type PublishJobs } from '../../jobs/publish.js';
import type { RequestRecords } from '../requestRecords.js';
import type { BatchBook, ClosedBatch } from './book.js';
import type { AnnouncementRow, CloseBatchJob } from '../../jobs/batch.js';

/** Documents stored per IPFS call (a batch of BATCH_MAX_COUNT rows may carry that many). */
const DOCUMENTS_PER_CALL = 500;

/**
 * A row as the Parquet writer takes it: the user id an integer again (it waits in Redis as decimal text). Text
 * that is no integer stays as it is, for the row's check to name.
 */
const parquetRow = (row: AnnouncementRow): Record<string, unknown> => ({
  ...row,
  fromId: typeof row.fromId === 'string' && /^-?\d+$/.test(row.fromId) ? BigInt(row.fromId) : row.fromId,
});

const reasonOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

export interface BatchWriterOptions {
  book: BatchBook;
  directory: SchemaDirectory;
  store: ContentStore;
  records: RequestRecords;
  /** publishQueue, where a written batch goes as a `batch` job. */
  publisher: JobHandOff<Pick<PublishJobs, 'batch'>>;
  /** content_batch_rows. */
  batchRows: Histogram;
  logger: Logger;
}

/** A stored batch file and the requests whose rows it holds. */
interface BatchFile {
  cid: string;
  size: number;
  referenceIds: string[];
}

/** Requests of a batch that fail on their own, each with its reason, by referenceId. */
type Refusals = Map<string, string>;

/**
 * The batchQueue processor: closes a batch, stores its ActivityStreams documents in IPFS, writes its rows as one
 * Parquet file in the schema's model, marks its requests batched and hands the file to the publish stage. Closing
 * is atomic and writing idempotent (the rows sorted, the file the same whoever writes it), so a job run twice
 * publishes once: the publish job's id is the batch's.
 *
 * What is one request's fault fails that request alone, and the batch goes on without it: a row the file cannot
 * hold (checked against the schema's model before writing, and should the writer still fail, found by writing
 * each row alone) and a document the store refuses while it takes the others. The request fails with the reason
 * and its webhook (RequestRecords, as every stage ends requests), and its row leaves the batch.
 */
export class BatchWriter {
  constructor(private readonly options: BatchWriterOptions) {}

  async process(job: Job<CloseBatchJob>, { log }: JobContext): Promise<{ cid: string; rows: number } | undefined> {
    const { batchId, schemaId } = job.data;
    const { book } = this.options;
    const batch = await book.close(batchId, schemaId);
    // Abandoned: another job of the batch failed for good, and its requests with it.
    if (!batch || batch.abandoned) return undefined;
    // The batch's job belongs to the trace of the request that opened it; every member's trace links here.
    linkActiveSpan(batch.traces);
    // A file stored by an earlier attempt is handed on as it is (its refused rows left the batch before).
    const file = batch.file ? { ...batch.file, referenceIds: memberIds(batch) } : await this.write(batch, log);
    if (!file) {
      await book.clear(batchId);
      return undefined;
    }
    return this.handOff(batch, file, log);
  }

  /**
   * The batch job failed its last attempt: the batch's requests fail with its error, each with its webhook, unless
   * its file was stored (then it is handed on). They are not put into a new batch: what is one request's fault
   * failed that request alone before (see the class), so what failed every attempt (ten, over some 8 minutes) is
   * not theirs — the schema gone from the chain, the store unreachable or storing documents under other CIDs —
   * and would meet a new batch just the same; re-queued, the requests could go round for ever, `processing` with
   * no webhook, which is the stranding this prevents. Failed, each may be posted again (a failed request starts
   * over) once the cause is fixed. abandon.lua makes this one decision with the writer's written.lua, so a batch is
   * never both failed and published.
   */
  async failed(job: Job<CloseBatchJob>, error: unknown): Promise<void> {
    const { batchId, schemaId } = job.data;
    const { book, records, logger } = this.options;
    // Closed first (no row joins it from now on), then the decision, then the batch as the decision left it.
    if (!(await book.close(batchId, schemaId))) return;
    const decision = await book.abandon(batchId);
    const batch = decision === 'gone' ? undefined : await book.close(batchId, schemaId);
    if (!batch) return;
    if (decision === 'written' && batch.file) {
      await this.handOff(batch, { ...batch.file, referenceIds: memberIds(batch) }, logger);
      return;
    }
    const referenceIds = memberIds(batch);
    const message = `the batch file could not be written: ${reasonOf(error)}`;
    await records.failed({ referenceIds, transactionType: 'CAPACITY_BATCH' }, { message });
    await book.clear(batchId);
    logger.error(
      { batchId, schemaId, requests: referenceIds.length, err: error },
      'batch abandoned: its requests failed',
    );
  }

  /**
   * Stores the documents and the file of the rows that can be published; the requests of the others fail on their
   * own and their rows leave the batch. Undefined when no row is left.
   */
  private async write(batch: ClosedBatch, log: Logger): Promise<BatchFile | undefined> {
    const { batchId, schemaId } = batch;
    const { book, directory, store } = this.options;
    if (batch.rows.length === 0) return undefined;
    const schema = await directory.schema(schemaId);
    if (!schema) throw new Error(`schema ${schemaId} is not on chain`);
    const model = parseParquetModel(schema.model);
    const refusals: Refusals = new Map();

    // Rows the file cannot hold leave first, so that their documents are not stored.
    let rows = batch.rows;
    let written = await this.fileOf(model, rows, refusals);
    rows = rows.filter(([referenceId]) => !refusals.has(referenceId));
    const refusedDocuments = await this.storeDocuments(
      rows.flatMap(([referenceId]): [string, string][] => {
        const document = batch.documents.get(referenceId);
        return document === undefined ? [] : [[referenceId, document]];
      }),
    );
    if (refusedDocuments.size > 0) {
      for (const [referenceId, reason] of refusedDocuments) refusals.set(referenceId, reason);
      rows = rows.filter(([referenceId]) => !refusals.has(referenceId));
      written = await this.fileOf(model, rows, refusals);
    }
    await this.refuse(batch, refusals, log);
    if (!written) return undefined;

    const stored = await store.add(written);
    const file = { cid: stored.cid, size: stored.size, referenceIds: rows.map(([referenceId]) => referenceId) };
    // Gone or abandoned meanwhile (another job wrote it, or its job failed for good and failed its requests).
    if (!(await book.written(batchId, file))) {
      log.warn({ batchId }, 'the batch was written or abandoned by another job meanwhile; this file is not handed on');
      return undefined;
    }
    return file;
  }

  /** The file of the rows that fit the model; each row that does not is added to `refusals`. */
  private async fileOf(
    model: ParquetModel,
    rows: [string, AnnouncementRow][],
    refusals: Refusals,
  ): Promise<Buffer | undefined> {
    const { file, refused } = await writeBatchRows(
      model,
      rows.map(([, row]) => parquetRow(row)),
    );
    for (const [index, reason] of refused)
      refusals.set(
        (rows[index] as [string, AnnouncementRow])[0],
        `the batch file cannot hold its announcement: ${reason}`,
      );
    return file;
  }

  /** Fails the refused requests, each with its reason and webhook, then takes their rows out of the batch. */
  private async refuse(batch: ClosedBatch, refusals: Refusals, log: Logger): Promise<void> {
    if (refusals.size === 0) return;
    // Failed first, removed after: a crash between the two leaves a request failed, never stranded in a batch.
    for (const [referenceId, message] of refusals)
      await this.options.records.failed(
        { referenceIds: [referenceId], transactionType: 'CAPACITY_BATCH' },
        { message },
      );
    await this.options.book.remove(batch.batchId, [...refusals.keys()]);
    log.warn(
      { batchId: batch.batchId, refused: Object.fromEntries(refusals) },
      'requests failed on their own; the batch goes on without them',
    );
  }

  /** Marks the requests batched and hands the stored file to the publish stage. */
  private async handOff(batch: ClosedBatch, file: BatchFile, log: Logger): Promise<{ cid: string; rows: number }> {
    const { batchId, schemaId } = batch;
    const { cid, size, referenceIds } = file;
    // Requests show their batch before the publication can move them on.
    await this.options.records.batched(referenceIds, { cid, schemaId });
    await this.options.publisher.add(
      PUBLISH_JOB_NAMES.announcementBatch,
      {
        batchId,
        schemaId,
        cid,
        size,
        referenceIds,
        ...(batch.traces.length > 0 ? { memberTraces: batch.traces } : {}),
      },
      { jobId: `batch-${batchId}` },
    );
    await this.options.book.clear(batchId);
    this.options.batchRows.observe(referenceIds.length);
    log.info({ batchId, schemaId, cid, rows: referenceIds.length, bytes: size }, 'batch written');
    return { cid, rows: referenceIds.length };
  }

  /**
   * Stores the documents in IPFS, DOCUMENTS_PER_CALL to a call, before the batch file that points at them; each
   * must get the CID its row names (worked out when the row was made). When that fails, each document is stored
   * alone: one refused while others are taken, and refused again once the store is seen to answer, is its
   * request's fault, and returned with the reason. When none is refused alone, or every one, or the store does
   * not answer, the failure is the store's, and thrown (the job is retried).
   */
  private async storeDocuments(documents: [string, string][]): Promise<Refusals> {
    try {
      await this.storeAll(documents.map(([, document]) => document));
      return new Map();
    } catch (error) {
      const first = await this.refusedAlone(documents);
      if (first.size === 0 || first.size === documents.length || !(await this.storeAnswers())) throw error;
      // A refusal while the store was going away is not the document's: it must hold a second time.
      return this.refusedAlone(documents.filter(([referenceId]) => first.has(referenceId)));
    }
  }

  /** The documents the store refuses when each is stored alone, with the reason. */
  private async refusedAlone(documents: [string, string][]): Promise<Refusals> {
    const refused: Refusals = new Map();
    for (const [referenceId, document] of documents)
      await this.storeAll([document]).catch((alone: unknown) =>
        refused.set(referenceId, `its document could not be stored: ${reasonOf(alone)}`),
      );
    return refused;
  }

  private async storeAnswers(): Promise<boolean> {
    try {
      await this.options.store.probe(AbortSignal.timeout(10_000));
      return true;
    } catch {
      return false;
    }
  }

  private async storeAll(documents: string[]): Promise<void> {
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

const memberIds = (batch: ClosedBatch) => batch.rows.map(([referenceId]) => referenceId);
