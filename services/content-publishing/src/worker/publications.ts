import type { ChainableCommander, Redis } from 'ioredis';

/** One call the chain stores as a message. */
export type Message =
  | { kind: 'ipfs'; schemaId: number; cid: string; size?: number }
  | { kind: 'on-chain'; schemaId: number; intentId: number; payload: string; onBehalfOf?: string };

/** How webhooks name what was published (the reference gateway's transaction types). */
export type TransactionType = 'CAPACITY_BATCH' | 'ON_CHAIN_CONTENT';

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
  | { state: 'pending' }
  | { state: 'submitted'; txHash: string }
  | { state: 'finalized'; txHash: string; blockNumber: number; blockHash: string }
  | { state: 'failed'; error: PublishError };

export interface PublishError {
  message: string;
  /** Chain errors: the pallet and error names, e.g. Messages / TooManyMessagesInBlock, */
  module?: string;
  name?: string;
  /** and their numbers: the pallet's index in the runtime (61) and the error's code in it. */
  index?: number;
  code?: number;
  /** The last failure was the transaction's era running out. */
  expired?: boolean;
}

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

const encode = (state: MessageState) => JSON.stringify(state);

/**
 * Publications in Redis (one hash each): the request as the publish job stated it, kept once, and the state
 * of each of its messages. Message states change together with the transaction tracker's records (the same
 * MULTI), so a crash never leaves a message both unsent and recorded, or sent and forgotten.
 */
export class PublicationBook {
  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
    private readonly ttlSeconds = 30 * 24 * 3600,
  ) {}

  key(id: string): string {
    return `${this.keyPrefix}:publication:${id}`;
  }

  /** Stores the publication unless it is stored already; returns the record as it is now. */
  async open(publication: Publication): Promise<PublicationRecord> {
    const key = this.key(publication.id);
    await this.redis
      .multi()
      .hsetnx(key, 'publication', JSON.stringify(publication))
      .expire(key, this.ttlSeconds)
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

  /** Adds message state changes to a MULTI (the tracker's record, or an outcome's). */
  stage(multi: ChainableCommander, id: string, changes: Map<number, MessageState>): ChainableCommander {
    const key = this.key(id);
    for (const [index, state] of changes) multi.hset(key, `m:${index}`, encode(state));
    return multi;
  }

  async set(id: string, changes: Map<number, MessageState>, also?: { attempts?: number; solo?: number[] }) {
    const multi = this.stage(this.redis.multi(), id, changes);
    if (also?.attempts !== undefined) multi.hset(this.key(id), 'attempts', also.attempts);
    for (const index of also?.solo ?? []) multi.hset(this.key(id), `solo:${index}`, 1);
    await multi.exec();
  }
}
