import {
  CapacityShortError,
  foreseenChainError,
  messageCalls,
  SubmissionError,
  type ChainConnection,
  type ChainQueries,
  type SchemaDirectory,
  type SignedTransaction,
} from '@frequency-gateway/chain';
import {
  holdsClaim,
  linkActiveSpan,
  StaleRunError,
  takeClaim,
  type Job,
  type JobContext,
  type RedisClient,
  type RunClaim,
} from '@frequency-gateway/platform';
import type { ContentStore } from '@frequency-gateway/storage';
import type { PublishError, RequestRecords } from '../requestRecords.js';
import { publishJobOf, type PublishJobName, type PublishJobs } from '../../jobs/publish.js';
import { SubmissionUnknownError, type MessageCall, type Packer, type Parcel } from './packer.js';
import { parcelsOf } from './packing.js';
import {
  endingOf,
  messageId,
  publicationOf,
  type Message,
  type MessageState,
  type Publication,
  type PublicationBook,
  type PublicationRecord,
} from './publications.js';

export interface PublisherOptions {
  api: ChainConnection['api'];
  /** Reads of the chain (the delegation of on-chain content). */
  queries: ChainQueries;
  book: PublicationBook;
  packer: Packer;
  /** Where the runs' claims are held (the publications' Redis). */
  redis: RedisClient;
  store: ContentStore;
  directory: SchemaDirectory;
  records: RequestRecords;
  providerId: bigint;
  maxBatch: number;
  /** How long a batch file's existence check may take. */
  storeTimeoutMs?: number;
}

type AnyPublishJob = Job<PublishJobs[PublishJobName]>;

/**
 * The publish stage, publishQueue's processor. A job's messages are checked (the batch file is in IPFS, and its
 * size is the file's length; the schema exists with the right payload location; a user delegated to the
 * provider for on-chain content published on their behalf), turned into `messages` calls, and handed to the
 * packer; the job completes once its transactions are in the node's pool, and the track stage settles them.
 * Messages already on their way (a retried job) are not sent twice. A publication that cannot be published
 * (foreseen, or its job's last attempt failed) fails its requests here.
 */
export class Publisher {
  constructor(private readonly options: PublisherOptions) {}

  async process(
    job: AnyPublishJob,
    { log, run }: Pick<JobContext, 'log' | 'run'>,
  ): Promise<{ transactions: string[]; stale?: boolean } | undefined> {
    // A batch's publication runs in the trace of the request that opened the batch; it links to the others.
    const stated = publishJobOf(job);
    if (stated.name === 'batch') linkActiveSpan(stated.data.memberTraces ?? []);
    const record = await this.recordOf(job, run);
    if (!record) return undefined;
    const claim = this.options.book.claim(record.publication.id, run);
    const pending = record.messages.flatMap((state, index) => (state.state === 'pending' ? [index] : []));
    if (pending.length === 0) return { transactions: [] };
    const { publication } = record;

    const problem = await this.check(publication, pending);
    if (problem) {
      await this.fail(publication, pending, problem, claim);
      log.warn({ publicationId: publication.id, error: problem }, 'not published: the chain would refuse it');
      return { transactions: [] };
    }

    const sizes = await this.sizes(publication, pending);
    const parcels = this.parcels(record, pending, sizes, claim);
    const sent = await Promise.allSettled(parcels.map((parcel) => this.options.packer.send(parcel)));
    const transactions = sent.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    await this.markSubmitted(publication, transactions);
    const refused = sent.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (refused?.reason instanceof StaleRunError) {
      // A later run of this job took it over (this one stalled past the job's lock): it sends the rest.
      log.warn({ publicationId: publication.id }, 'a later run of this job took it over: this run stops');
      return { transactions: transactions.map((tx) => tx.hash), stale: true };
    }
    if (refused && !(refused.reason instanceof SubmissionUnknownError)) {
      if (refused.reason instanceof SubmissionError && refused.reason.kind === 'cannotPayFees')
        throw new CapacityShortError('the node refused the transaction for its fees', { cause: refused.reason });
      throw refused.reason;
    }
    log.debug({ publicationId: publication.id, transactions: transactions.map((tx) => tx.hash) }, 'submitted');
    return { transactions: transactions.map((tx) => tx.hash) };
  }

  /**
   * The job failed its last attempt: its messages not on their way fail, and so do its requests; unless a later
   * run of the job holds the publication's claim.
   */
  async failed(job: AnyPublishJob, error: unknown, { run }: Pick<JobContext, 'run'>): Promise<void> {
    const stated = publishJobOf(job);
    const id = stated.name === 'retry' ? stated.data.publicationId : publicationOf(stated).id;
    const record = await this.options.book.get(id);
    const publication = record?.publication ?? (stated.name === 'retry' ? undefined : publicationOf(stated));
    if (!publication) return;
    const pending = (record?.messages ?? []).flatMap((state, index) => (state.state === 'pending' ? [index] : []));
    const message = error instanceof Error ? error.message : String(error);
    await this.fail(publication, pending, { message }, record ? this.options.book.claim(id, run) : undefined);
  }

  /** Fails pending messages and the publication's requests, while the run holds its claim (when it took one). */
  private async fail(publication: Publication, pending: number[], error: PublishError, claim?: RunClaim) {
    if (claim && !(await holdsClaim(this.options.redis, claim))) return;
    await this.options.book.set(
      publication.id,
      new Map(pending.map((index): [number, MessageState] => [index, { state: 'failed', error }])),
    );
    await this.options.records.failed(endingOf(publication), error);
  }

  /** The job's publication, read once this run holds its claim. */
  private async recordOf(job: AnyPublishJob, run: string): Promise<PublicationRecord | undefined> {
    const { book } = this.options;
    const stated = publishJobOf(job);
    let id: string;
    if (stated.name === 'retry') {
      id = stated.data.publicationId;
      if (!(await book.get(id))) return undefined;
    } else {
      const publication = publicationOf(stated);
      id = publication.id;
      const record = await book.open(publication);
      // A request that failed and was posted again starts over.
      if (record.messages.some((state) => state.state === 'failed') && job.attemptsMade === 0) {
        await book.reset(id);
        await book.open(publication);
      }
    }
    await takeClaim(this.options.redis, book.claim(id, run), book.retentionSeconds);
    return book.get(id);
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
        const { queries } = this.options;
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

  private call(message: Message, size: number | undefined): MessageCall {
    const calls = messageCalls(this.options.api);
    return message.kind === 'ipfs'
      ? calls.addIpfsMessage(message.schemaId, message.cid, size ?? message.size ?? 0)
      : calls.addOnchainMessage(message.onBehalfOf, message.schemaId, message.payload);
  }

  /** The publication's pending messages as parcels (packing.ts decides which travel together). */
  private parcels(record: PublicationRecord, pending: number[], sizes: Map<number, number>, claim: RunClaim) {
    const { publication } = record;
    return parcelsOf(pending, record.solo, this.options.maxBatch).map(({ messages, solo }): Parcel => ({
      messageIds: messages.map((index) => messageId(publication.id, index)),
      calls: messages.map((index) => this.call(publication.messages[index] as Message, sizes.get(index))),
      solo,
      claim,
    }));
  }

  private async markSubmitted(publication: Publication, transactions: SignedTransaction[]): Promise<void> {
    const last = transactions.at(-1);
    if (last) await this.options.records.submitted(publication.referenceIds, last.hash);
  }
}

/** A batch file to announce is not in the content store (yet): the job is retried with backoff. */
export class BatchFileMissingError extends Error {
  constructor(readonly cid: string) {
    super(`batch file ${cid} is not in the content store`);
    this.name = 'BatchFileMissingError';
  }
}
