import type { SchemaDirectory } from '@frequency-gateway/chain';
import { DelayedError, type Job, type JobContext, type Logger } from '@frequency-gateway/platform';
import type { ContentStore } from '@frequency-gateway/storage';
import type { RequestRecords } from '../requestRecords.js';
import type { ContentBuilder } from './builder.js';
import { INTENT_OF_KIND, type ContentRequestJob } from '../../jobs/document.js';
import type { BatchDoor, Joined } from '../../jobs/batch.js';

/** Thrown while the chain has no schema for an announcement type (the job is retried). */
export class NoSchemaError extends Error {
  constructor(intent: string) {
    super(`the chain has no schema for intent ${intent}`);
    this.name = 'NoSchemaError';
  }
}

/** How long a job waits while the content store does not answer. */
const STORE_AWAY_WAIT_MS = 5_000;

/** Thrown while an asset a request refers to is not in the content store (the job is retried, then fails). */
export class AssetGoneError extends Error {
  constructor(readonly cid: string) {
    super(`asset ${cid} is no longer in the content store: it was uploaded, but the store has lost it`);
    this.name = 'AssetGoneError';
  }
}

export interface AnnouncerOptions {
  builder: ContentBuilder;
  directory: SchemaDirectory;
  /** Where the request's assets must still be. */
  store: ContentStore;
  /** How long an asset's existence check may take. */
  storeTimeoutMs?: number;
  /** The batch stage's door. */
  batches: BatchDoor;
  records: RequestRecords;
  logger: Logger;
}

/**
 * The document stage, requestQueue's processor: a request becomes its DSNP announcement (and, for a broadcast,
 * reply, update or profile, its ActivityStreams document) and joins the open batch of the latest schema of its
 * announcement type. A request whose job fails for good fails here, unless it joined a batch: then the batch
 * decides how it ends (the withdrawal and the joining are one atomic decision, see batch/withdraw.lua).
 */
export class Announcer {
  constructor(private readonly options: AnnouncerOptions) {}

  async process(job: Job<ContentRequestJob>, { log, token }: JobContext): Promise<{ batchId?: string }> {
    const { referenceId, kind, acceptedAt } = job.data;
    if (!(await this.options.records.processing(referenceId))) {
      log.info({ referenceId }, 'the request has ended already; its job has nothing to do');
      return {};
    }
    await this.checkAssets(job, token);
    const announcement = await this.options.builder.build(job.data);
    const intent = INTENT_OF_KIND[kind];
    const schemaId = (await this.options.directory.intentByName(intent))?.latestSchemaId;
    if (schemaId === undefined) throw new NoSchemaError(intent);
    const joined = await this.options.batches.join(schemaId, { referenceId, acceptedAt, kind }, announcement);
    log.debug({ referenceId, ...joined }, 'announcement batched');
    return joinedBatch(joined);
  }

  /**
   * Every asset the request refers to is still in the store: the document links to each, and a link to content
   * the store lost would be published broken. One that is gone fails this request alone (after the job's
   * attempts), before it joins a batch. While the store does not answer at all, nothing is known to be gone: the
   * job waits, its attempts unspent.
   */
  private async checkAssets(job: Job<ContentRequestJob>, token: string | undefined): Promise<void> {
    const { store } = this.options;
    const timeout = () => AbortSignal.timeout(this.options.storeTimeoutMs ?? 30_000);
    for (const cid of Object.keys(job.data.assets)) {
      if (await store.stat(cid, { signal: timeout() })) continue;
      const answers = await store.probe(timeout()).then(
        () => true,
        () => false,
      );
      if (answers) throw new AssetGoneError(cid);
      await job.moveToDelayed(Date.now() + STORE_AWAY_WAIT_MS, token);
      throw new DelayedError();
    }
  }

  /** The job's last attempt failed: the request fails, unless it is in a batch already (or a later acceptance is). */
  async failed(job: Job<ContentRequestJob>, error: unknown): Promise<void> {
    const { referenceId, acceptedAt } = job.data;
    const withdrawal = await this.options.batches.withdraw({ referenceId, acceptedAt });
    if (withdrawal.outcome === 'withdrawn') {
      const reason = error instanceof Error ? error.message : String(error);
      await this.options.records.failed(
        { referenceIds: [referenceId], transactionType: 'CAPACITY_BATCH' },
        { message: reason },
      );
      return;
    }
    this.options.logger.warn(
      { referenceId, jobId: job.id, err: error, ...withdrawal },
      withdrawal.outcome === 'joined'
        ? 'the job failed after its request joined a batch: the batch decides how it ends'
        : 'a stale job failed: a later acceptance of its request is under way',
    );
  }
}

function joinedBatch(joined: Joined): { batchId?: string } {
  return joined.outcome === 'refused' ? {} : { batchId: joined.batchId };
}
