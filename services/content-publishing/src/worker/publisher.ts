import {
  ChainQueries,
  foreseenChainError,
  messageCalls,
  SubmissionError,
  type SignedTransaction,
} from '@frequency-gateway/chain';
import type { Job, JobContext, RequestStatusStore } from '@frequency-gateway/platform';
import type { ContentStore } from '@frequency-gateway/storage';
import type { ApiPromise } from '@polkadot/api';
import type { Call } from '@polkadot/types/interfaces';
import type { SchemaDirectory } from '@frequency-gateway/chain';
import { JOB_NAMES, type BatchFilesJob, type OnChainJob } from '../jobs.js';
import type { Outcomes, RetryJob } from './outcomes.js';
import { inBatches, RETRY_JOB } from './outcomes.js';
import { SubmissionUnknownError, type Packer, type Parcel } from './packer.js';
import {
  messageId,
  type Message,
  type MessageState,
  type Publication,
  type PublicationBook,
  type PublicationRecord,
  type PublishError,
} from './publications.js';

/** publishQueue job `batch`: an announcement batch file the worker wrote. */
export interface AnnouncementBatchJob {
  batchId: string;
  schemaId: number;
  cid: string;
  /** The file's length in bytes (the message's payloadLength). */
  size: number;
  referenceIds: string[];
}

export const ANNOUNCEMENT_BATCH_JOB = 'batch';

export type PublishJobData = AnnouncementBatchJob | BatchFilesJob | OnChainJob | RetryJob;

/** The node refused the transaction for lack of Capacity: wait for the next epoch (or a new stake). */
export class CapacityShortError extends Error {
  constructor(cause: unknown) {
    super('the provider has no Capacity left for this epoch', { cause });
    this.name = 'CapacityShortError';
  }
}

/** What a publish job asks for, as a publication. */
export function publicationOf(name: string, data: PublishJobData): Publication | undefined {
  if (name === ANNOUNCEMENT_BATCH_JOB) {
    const job = data as AnnouncementBatchJob;
    return {
      id: `batch-${job.batchId}`,
      transactionType: 'CAPACITY_BATCH',
      referenceIds: job.referenceIds,
      messages: [{ kind: 'ipfs', schemaId: job.schemaId, cid: job.cid, size: job.size }],
      batchId: job.batchId,
    };
  }
  if (name === JOB_NAMES.batchFiles) {
    const job = data as BatchFilesJob;
    return {
      id: job.referenceId,
      transactionType: 'CAPACITY_BATCH',
      referenceIds: [job.referenceId],
      messages: job.files.map((file) => ({ kind: 'ipfs', schemaId: file.schemaId, cid: file.cid })),
    };
  }
  if (name === JOB_NAMES.onChain) {
    const job = data as OnChainJob;
    return {
      id: job.referenceId,
      transactionType: 'ON_CHAIN_CONTENT',
      referenceIds: [job.referenceId],
      messages: [
        {
          kind: 'on-chain',
          schemaId: job.schemaId,
          intentId: job.intentId,
          payload: job.payload,
          ...(job.onBehalfOf ? { onBehalfOf: job.onBehalfOf } : {}),
        },
      ],
      ...(job.onBehalfOf ? { msaId: job.onBehalfOf } : {}),
    };
  }
  return undefined;
}

export interface PublisherOptions {
  api: ApiPromise;
  book: PublicationBook;
  packer: Packer;
  store: ContentStore;
  directory: SchemaDirectory;
  status: RequestStatusStore;
  outcomes: Outcomes;
  providerId: bigint;
  maxBatch: number;
  /** How long a batch file's existence check may take. */
  storeTimeoutMs?: number;
}

/**
 * The publishQueue processor. A job's messages are checked (the batch file is in IPFS, and its size is the
 * file's length; the schema exists with the right payload location; a user delegated to the provider for
 * on-chain content published on their behalf), turned into `messages` calls, and handed to the packer;
 * the job completes once its transactions are in the node's pool. The tracker reports their outcome.
 * Messages already on their way (a retried job) are not sent twice.
 */
export class Publisher {
  constructor(private readonly options: PublisherOptions) {}

  async process(job: Job<PublishJobData>, { log }: JobContext): Promise<{ transactions: string[] } | undefined> {
    const record = await this.recordOf(job);
    if (!record) return undefined;
    const pending = record.messages.flatMap((state, index) => (state.state === 'pending' ? [index] : []));
    if (pending.length === 0) return { transactions: [] };
    const { publication } = record;

    const problem = await this.check(publication, pending);
    if (problem) {
      await this.options.book.set(
        publication.id,
        new Map(pending.map((index) => [index, { state: 'failed', error: problem }])),
      );
      await this.options.outcomes.fail(publication, problem);
      return { transactions: [] };
    }

    const sizes = await this.sizes(publication, pending);
    const parcels = this.parcels(record, pending, sizes);
    const sent = await Promise.allSettled(parcels.map((parcel) => this.options.packer.send(parcel)));
    const transactions = sent.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    await this.markSubmitted(publication, transactions);
    const refused = sent.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (refused && !(refused.reason instanceof SubmissionUnknownError)) {
      if (refused.reason instanceof SubmissionError && refused.reason.kind === 'cannotPayFees')
        throw new CapacityShortError(refused.reason);
      throw refused.reason;
    }
    log.debug({ publicationId: publication.id, transactions: transactions.map((tx) => tx.hash) }, 'submitted');
    return { transactions: transactions.map((tx) => tx.hash) };
  }

  private async recordOf(job: Job<PublishJobData>): Promise<PublicationRecord | undefined> {
    if (job.name === RETRY_JOB) return this.options.book.get((job.data as RetryJob).publicationId);
    const publication = publicationOf(job.name, job.data);
    if (!publication) throw new Error(`unknown publish job ${job.name}`);
    const record = await this.options.book.open(publication);
    // A request that failed and was posted again starts over.
    if (record.messages.some((state) => state.state === 'failed') && job.attemptsMade === 0) {
      await this.options.book.reset(publication.id);
      return this.options.book.open(publication);
    }
    return record;
  }

  private async check(publication: Publication, pending: number[]): Promise<PublishError | undefined> {
    // What the chain would refuse the call with, named and numbered as a failed transaction reports it.
    const foreseen = (name: string, reason: string) => foreseenChainError(this.options.api, 'messages', name, reason);
    for (const index of pending) {
      const message = publication.messages[index] as Message;
      const schema = await this.options.directory.schema(message.schemaId);
      if (!schema) return foreseen('InvalidSchemaId', `schema ${message.schemaId} does not exist`);
      const location = message.kind === 'ipfs' ? 'IPFS' : 'OnChain';
      if (schema.payloadLocation !== location)
        return foreseen(
          'InvalidPayloadLocation',
          `schema ${message.schemaId} stores its payloads ${schema.payloadLocation}, not ${location}`,
        );
      if (message.kind === 'on-chain' && message.onBehalfOf !== undefined) {
        const queries = new ChainQueries(this.options.api);
        const user = BigInt(message.onBehalfOf);
        if (!(await queries.isDelegatedFor(user, this.options.providerId, message.intentId)))
          return foreseen(
            'UnAuthorizedDelegate',
            `user ${user} has not delegated intent ${message.intentId} to provider ${this.options.providerId}`,
          );
      }
    }
    return undefined;
  }

  /** The length of each pending batch file, read from the store (the job's own figure is not trusted). */
  private async sizes(publication: Publication, pending: number[]): Promise<Map<number, number>> {
    const sizes = new Map<number, number>();
    for (const index of pending) {
      const message = publication.messages[index] as Message;
      if (message.kind !== 'ipfs') continue;
      const stat = await this.options.store.stat(message.cid, {
        signal: AbortSignal.timeout(this.options.storeTimeoutMs ?? 30_000),
      });
      if (!stat) throw new BatchFileMissingError(message.cid);
      sizes.set(index, stat.size);
    }
    return sizes;
  }

  private call(message: Message, size: number | undefined): Call {
    const calls = messageCalls(this.options.api);
    return message.kind === 'ipfs'
      ? calls.addIpfsMessage(message.schemaId, message.cid, size ?? message.size ?? 0)
      : calls.addOnchainMessage(message.onBehalfOf, message.schemaId, message.payload);
  }

  /** Solo messages alone; the rest in groups up to the chain's batch maximum (each group all or nothing). */
  private parcels(record: PublicationRecord, pending: number[], sizes: Map<number, number>): Parcel[] {
    const { publication } = record;
    const groups: number[][] = [];
    const together = pending.filter((index) => !record.solo.has(index));
    for (let start = 0; start < together.length; start += this.options.maxBatch)
      groups.push(together.slice(start, start + this.options.maxBatch));
    const alone = pending.filter((index) => record.solo.has(index)).map((index) => [index]);
    const book = this.options.book;
    return [...groups.map((group) => ({ group, solo: false })), ...alone.map((group) => ({ group, solo: true }))].map(
      ({ group, solo }) => ({
        messageIds: group.map((index) => messageId(publication.id, index)),
        calls: group.map((index) => this.call(publication.messages[index] as Message, sizes.get(index))),
        solo,
        record: (multi, txHash) =>
          book.stage(multi, publication.id, new Map(group.map((index) => [index, { state: 'submitted', txHash }]))),
        unrecord: (multi) =>
          book.stage(
            multi,
            publication.id,
            new Map(group.map((index): [number, MessageState] => [index, { state: 'pending' }])),
          ),
      }),
    );
  }

  private async markSubmitted(publication: Publication, transactions: SignedTransaction[]): Promise<void> {
    const last = transactions.at(-1);
    if (!last) return;
    await inBatches(publication.referenceIds, 200, (referenceId) =>
      this.options.status.update(referenceId, 'submitted', { transaction: { hash: last.hash } }),
    );
  }
}

/** A batch file to announce is not in the content store (yet): the job is retried with backoff. */
export class BatchFileMissingError extends Error {
  constructor(readonly cid: string) {
    super(`batch file ${cid} is not in the content store`);
    this.name = 'BatchFileMissingError';
  }
}
