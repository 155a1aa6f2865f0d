import type { RecordWrite, TransactionTracker } from '@frequency-gateway/chain';
import type { ChainableCommander } from 'ioredis';
import type { RedisClient, RunClaim } from '@frequency-gateway/platform';
import type { EndingRequests, PublishError, TransactionType } from '../requestRecords.js';
import { WORKER_RETENTION } from '../retention.js';
import type { PublishJob } from '../../jobs/publish.js';

/** One call the chain stores as a message. */
export type Message =
  | { kind: 'ipfs'; schemaId: number; cid: string; size?: number }
  | { kind: 'on-chain'; schemaId: number; intentId: number; payload: string; onBehalfOf?: string };

/**
 * What one publish job asks for: messages to put on chain and the requests they settle. A request is
 * finalized when every message of its publication is in a finalized block, and failed when one cannot be.
 */
export interface Publication {
  id: string;
  transactionType: TransactionType;
  referenceIds: string[];
  messages: Message[];
  /** The user for whom on-chain content is published, for the webhook. */
  msaId?: string;
  /** Announcement batches: the batch, for logs. */
  batchId?: string;
}

/** The state of one message: waiting to go, riding in a transaction, in a finalized block, or refused. */
export type MessageState =
  /** To be sent; `after`: the transaction whose outcome (expired, or the block was full) sent it back. */
  | { state: 'pending'; after?: string }
  | { state: 'submitted'; txHash: string }
  | { state: 'finalized'; txHash: string; blockNumber: number; blockHash: string }
  /** Cannot be published; `txHash`: the transaction whose outcome said so, when one did. */
  | { state: 'failed'; error: PublishError; txHash?: string };

export interface PublicationRecord {
  publication: Publication;
  messages: MessageState[];
  /** Retries so far (re-submissions after a retriable chain failure or expiry). */
  attempts: number;
  /** Messages that must travel alone (a packed transaction failed and the culprit is being found). */
  solo: Set<number>;
}

/** `<publication id>#<message index>`: what the transaction tracker records for each message. */
export const messageId = (publicationId: string, index: number) => `${publicationId}#${index}`;

export function parseMessageId(id: string): { publicationId: string; index: number } {
  const at = id.lastIndexOf('#');
  return { publicationId: id.slice(0, at), index: Number(id.slice(at + 1)) };
}

/** What a publish job (other than a retry, which names a stored publication) asks for, as a publication. */
export function publicationOf(job: Exclude<PublishJob, { name: 'retry' }>): Publication {
  switch (job.name) {
    case 'batch':
      return {
        id: `batch-${job.data.batchId}`,
        transactionType: 'CAPACITY_BATCH',
        referenceIds: job.data.referenceIds,
        messages: [{ kind: 'ipfs', schemaId: job.data.schemaId, cid: job.data.cid, size: job.data.size }],
        batchId: job.data.batchId,
      };
    case 'batch-files':
      return {
        id: job.data.referenceId,
        transactionType: 'CAPACITY_BATCH',
        referenceIds: [job.data.referenceId],
        messages: job.data.files.map((file) => ({ kind: 'ipfs', schemaId: file.schemaId, cid: file.cid })),
      };
    case 'on-chain': {
      const { referenceId, schemaId, intentId, payload, onBehalfOf } = job.data;
      return {
        id: referenceId,
        transactionType: 'ON_CHAIN_CONTENT',
        referenceIds: [referenceId],
        messages: [{ kind: 'on-chain', schemaId, intentId, payload, ...(onBehalfOf ? { onBehalfOf } : {}) }],
        ...(onBehalfOf ? { msaId: onBehalfOf } : {}),
      };
    }
  }
}

/** The requests of a publication, as they end together (with the on-chain message's schema, intent and user). */
export function endingOf(publication: Publication): EndingRequests {
  const first = publication.messages[0];
  return {
    referenceIds: publication.referenceIds,
    transactionType: publication.transactionType,
    ...(first?.kind === 'on-chain'
      ? {
          onChain: {
            schemaId: first.schemaId,
            intentId: first.intentId,
            ...(first.onBehalfOf ? { msaId: first.onBehalfOf } : {}),
          },
        }
      : {}),
  };
}

/** What the packer records with each transaction, and writes back when the node refuses one. */
export interface MessageWrites {
  tracker: TransactionTracker;
  /** The messages' states as riding in the transaction. */
  submitted(txHash: string, messageIds: string[]): RecordWrite[];
  /** The messages back to pending (the node refused the transaction). */
  unsent(messageIds: string[]): RecordWrite[];
}

const encode = (state: MessageState) => JSON.stringify(state);

/**
 * Publications in Redis (one hash each): the request as the publish job stated it, kept once, and the state
 * of each of its messages. Message states change together with the transaction tracker's records: this module
 * alone writes what goes with the tracker's records (`submissions`), so a crash never
 * leaves a message both unsent and recorded, or sent and forgotten.
 */
export class PublicationBook {
  constructor(
    private readonly redis: RedisClient,
    private readonly keyPrefix: string,
    /** How long a publication is kept after its last change (`publicationSeconds` of REQUEST_STATUS_TTL_SECONDS). */
    readonly retentionSeconds: number = WORKER_RETENTION.publicationSeconds,
  ) {}

  private key(id: string): string {
    return `${this.keyPrefix}:publication:${id}`;
  }

  /** Stores the publication unless it is stored already; returns the record as it is now. */
  async open(publication: Publication): Promise<PublicationRecord> {
    const key = this.key(publication.id);
    await this.redis
      .multi()
      .hsetnx(key, 'publication', JSON.stringify(publication))
      .expire(key, this.retentionSeconds)
      .exec();
    return (await this.get(publication.id)) as PublicationRecord;
  }

  /** Forgets a publication (a failed request posted again starts over). */
  async reset(id: string): Promise<void> {
    await this.redis.del(this.key(id));
  }

  async get(id: string): Promise<PublicationRecord | undefined> {
    const fields = await this.redis.hgetall(this.key(id));
    if (!fields.publication) return undefined;
    const publication = JSON.parse(fields.publication) as Publication;
    return {
      publication,
      messages: publication.messages.map((_, index) => {
        const stored = fields[`m:${index}`];
        return stored ? (JSON.parse(stored) as MessageState) : { state: 'pending' };
      }),
      attempts: Number(fields.attempts ?? 0),
      solo: new Set(
        Object.keys(fields)
          .filter((field) => field.startsWith('solo:'))
          .map((field) => Number(field.slice(5))),
      ),
    };
  }

  async set(id: string, changes: Map<number, MessageState>, also?: { attempts?: number; solo?: number[] }) {
    const multi = this.redis.multi();
    this.stage(multi, id, changes);
    if (also?.attempts !== undefined) multi.hset(this.key(id), 'attempts', also.attempts);
    for (const index of also?.solo ?? []) multi.hset(this.key(id), `solo:${index}`, 1);
    await multi.exec();
  }

  /**
   * The packer's record of its transactions: each is recorded with the tracker together with its messages as
   * submitted in it, all or nothing; one the node refused is forgotten with its messages back to pending, likewise.
   */
  submissions(tracker: TransactionTracker): MessageWrites {
    return {
      tracker,
      submitted: (txHash, messageIds) => this.messageWrites(messageIds, { state: 'submitted', txHash }),
      unsent: (messageIds) => this.messageWrites(messageIds, { state: 'pending' }),
    };
  }

  /**
   * The claim of one run of a publication's job (its fencing token, held in the publication's hash): every run
   * takes it before it reads which messages are pending, so that a run that read them before a later run took
   * over (its worker stalled past the job's lock) can record none of them.
   */
  claim(id: string, run: string): RunClaim {
    return { key: this.key(id), field: 'run', token: run };
  }

  /** Each message's state set in its publication (whose TTL is renewed). */
  private messageWrites(messageIds: string[], state: MessageState): RecordWrite[] {
    const value = encode(state);
    return messageIds.map((id) => {
      const { publicationId, index } = parseMessageId(id);
      return { key: this.key(publicationId), field: `m:${index}`, value, ttlSeconds: this.retentionSeconds };
    });
  }

  private stage(multi: ChainableCommander, id: string, changes: Map<number, MessageState>): void {
    for (const [index, state] of changes) multi.hset(this.key(id), `m:${index}`, encode(state));
    multi.expire(this.key(id), this.retentionSeconds);
  }
}
