import { duplicateRedis, type RedisClient } from '../redis/connection.js';
import { ReplicatedWrites, type Durability } from '../redis/durability.js';
import { RedisScript } from '../redis/script.js';
import { claimArguments, type RunClaim } from '../queues/runClaims.js';

/** A step of a request's life, as the history lists it. */
export interface RequestStep {
  state: string;
  at: string;
}

/**
 * What a caller learns about an accepted request: its current state, the details the state brought (a
 * batch CID, a transaction hash, a block, an error) and the steps so far. `version` grows with every change.
 */
export interface RequestSnapshot {
  referenceId: string;
  state: string;
  version: number;
  createdAt: string;
  updatedAt: string;
  [detail: string]: unknown;
}

/** A snapshot with the steps that led to it (what GET /v1/requests/{referenceId} answers). */
export interface RequestRecord extends RequestSnapshot {
  history: RequestStep[];
}

export interface RequestStatusOptions {
  /** Key prefix (CACHE_KEY_PREFIX); records live at `<prefix>:request:<referenceId>`. */
  prefix: string;
  /** How long a record is kept after its last change. */
  ttlSeconds: number;
  /** States after which no update applies (a later `create` may still start the request over). */
  finalStates: readonly string[];
}

/** A request to record: its id, the fields its record starts with (its state among them), its outbox entry. */
export interface NewRequest {
  referenceId: string;
  fields: { state: string } & Record<string, unknown>;
  /** Appended to the outbox stream (see createMany), as field/value pairs. */
  entry?: Record<string, string>;
}

/** What recording a request came to, and the request's state now. */
export interface CreateOutcome {
  outcome: 'created' | 'restarted' | 'existing';
  state: string;
}

export type RequestListener = (record: RequestSnapshot) => void;

// The scripts keep the last 50 steps of a request's history.
const CREATE = RedisScript.fromFile(new URL('./createRequests.lua', import.meta.url));
const UPDATE = RedisScript.fromFile(new URL('./updateRequest.lua', import.meta.url));

const FIELD_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

const bigintsAsText = (_key: string, item: unknown) => (typeof item === 'bigint' ? item.toString() : item);

/** JSON with bigints as decimal strings (most values have none: JSON.stringify alone, without a replacer, is faster). */
function toJson(value: unknown): string {
  if (typeof value === 'bigint') return JSON.stringify(value.toString());
  try {
    return JSON.stringify(value);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    return JSON.stringify(value, bigintsAsText);
  }
}

function encodeFields(fields: Record<string, unknown>): string[] {
  const pairs: string[] = [];
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    if (!FIELD_NAME.test(name) || ['version', 'createdAt', 'updatedAt', 'history'].includes(name))
      throw new Error(`request field "${name}" cannot be set`);
    pairs.push(name, toJson(value));
  }
  return pairs;
}

/**
 * The state of accepted requests, shared by an api (which creates records and serves them) and its worker
 * (which moves them along). Each change is one atomic script that also publishes the new record, so a
 * listener never misses a step between reading a record and watching it.
 */
export class RequestStatusStore {
  private subscriber?: RedisClient;
  private readonly listeners = new Map<string, Set<RequestListener>>();
  private readonly finals: string[];

  constructor(
    private readonly redis: RedisClient,
    private readonly options: RequestStatusOptions,
  ) {
    this.finals = options.finalStates.map((state) => JSON.stringify(state));
  }

  /**
   * What confirms this store's writes on replicas (acknowledged = durable): WAIT on its connection, and no loss of
   * that connection between `mark()` and `confirm()`. On a Redis Cluster WAIT goes to the primary of the slot.
   */
  replicatedWrites(durability: Durability): ReplicatedWrites {
    return new ReplicatedWrites([this.redis], durability, this.keys('')[0]);
  }

  private keys(referenceId: string): [string, string] {
    const key = `${this.options.prefix}:request:${referenceId}`;
    return [key, `${key}:history`];
  }

  private channel(referenceId: string): string {
    return `${this.options.prefix}:request-events:${referenceId}`;
  }

  isFinal(state: string): boolean {
    return this.options.finalStates.includes(state);
  }

  /**
   * Records a new request. Answers `existing` when a record for this id is already there, unless its state
   * is one of `restartFrom` (a failed request posted again starts over): then `restarted`.
   */
  async create(
    referenceId: string,
    fields: NewRequest['fields'],
    restartFrom: readonly string[] = [],
  ): Promise<CreateOutcome['outcome']> {
    const [created] = await this.createMany([{ referenceId, fields }], { restartFrom });
    return (created as CreateOutcome).outcome;
  }

  /**
   * Records many requests in one script (what an api accepted in one turn of its event loop), with what
   * `create` answers for each and each one's state now: the new state, or the state of the record found.
   *
   * With an `outbox` stream, a request's `entry` is appended to it in the same script when its record is new
   * or restarted, or is still in the state it starts with, with its `outcome` as one more field: the record and
   * the work it stands for are written together or not at all.
   */
  async createMany(
    requests: readonly NewRequest[],
    options: { restartFrom?: readonly string[]; outbox?: string } = {},
  ): Promise<CreateOutcome[]> {
    if (requests.length === 0) return [];
    const restartFrom = options.restartFrom ?? [];
    const keys: string[] = options.outbox ? [options.outbox] : [];
    const args: (string | number)[] = [
      this.options.ttlSeconds,
      new Date().toISOString(),
      options.outbox ? 1 : 0,
      restartFrom.length,
      ...restartFrom.map((state) => JSON.stringify(state)),
    ];
    for (const { referenceId, fields, entry = {} } of requests) {
      keys.push(...this.keys(referenceId));
      const pairs = encodeFields({ referenceId, ...fields });
      const entryPairs = Object.entries(entry).flat();
      args.push(this.channel(referenceId), pairs.length / 2, ...pairs, entryPairs.length / 2, ...entryPairs);
    }
    const answers = (await CREATE.run(this.redis, keys, args)) as string[];
    return requests.map((_request, index) => ({
      outcome: answers[2 * index] as CreateOutcome['outcome'],
      state: JSON.parse(answers[2 * index + 1] as string) as string,
    }));
  }

  /**
   * Moves a request along and merges the details into its record. Returns false when there is no record,
   * or when it is already final (a late or repeated step changes nothing), or when the updating run no longer
   * holds one of `claims` (a later run of its job took over: a stale run's step changes nothing).
   */
  async update(
    referenceId: string,
    state: string,
    details: Record<string, unknown> = {},
    claims: readonly RunClaim[] = [],
  ): Promise<boolean> {
    const claimed = claimArguments(claims);
    const outcome = (await UPDATE.run(
      this.redis,
      [...this.keys(referenceId), ...claimed.keys],
      [
        this.options.ttlSeconds,
        this.channel(referenceId),
        new Date().toISOString(),
        this.finals.length,
        ...this.finals,
        ...claimed.args,
        ...encodeFields({ ...details, state }),
      ],
    )) as number;
    return outcome === 1;
  }

  async get(referenceId: string): Promise<RequestRecord | undefined> {
    const [key, historyKey] = this.keys(referenceId);
    const results = await this.redis.multi().hgetall(key).lrange(historyKey, 0, -1).exec();
    const [fields, history] = (results ?? []).map(([error, value]) => {
      if (error) throw error;
      return value;
    }) as [Record<string, string>, string[]];
    if (!fields || Object.keys(fields).length === 0) return undefined;
    const record = Object.fromEntries(Object.entries(fields).map(([name, value]) => [name, JSON.parse(value)]));
    return { ...record, history: history.map((step) => JSON.parse(step) as RequestStep) } as RequestRecord;
  }

  /** Calls `listener` with every change of the request until the returned function is called. */
  async watch(referenceId: string, listener: RequestListener): Promise<() => void> {
    const channel = this.channel(referenceId);
    if (!this.subscriber) {
      // Its own connection (a subscribed connection takes no other commands); the first SUBSCRIBE waits for
      // it to connect, even when the store's connection fails fast.
      this.subscriber = duplicateRedis(this.redis, { enableOfflineQueue: true, maxRetriesPerRequest: 1 });
      this.subscriber.on('error', () => undefined);
      this.subscriber.on('message', (from: string, message: string) => {
        const record = JSON.parse(message) as RequestRecord;
        for (const notify of this.listeners.get(from) ?? []) notify(record);
      });
    }
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
      await this.subscriber.subscribe(channel);
    }
    set.add(listener);
    return () => {
      const listeners = this.listeners.get(channel);
      if (!listeners?.delete(listener) || listeners.size > 0) return;
      this.listeners.delete(channel);
      void this.subscriber?.unsubscribe(channel).catch(() => undefined);
    };
  }

  close(): void {
    this.listeners.clear();
    this.subscriber?.disconnect();
    this.subscriber = undefined;
  }
}
