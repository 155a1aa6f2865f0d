import type { Redis } from 'ioredis';
import { RedisScript } from '../redis/script.js';

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

const HISTORY_LIMIT = 50;

// KEYS: the outbox stream when there is one, then the record hash and history list of each request. ARGV: ttl,
// at, 1 when there is an outbox, the number of states a record may restart from, those states (JSON-encoded),
// then for each request: its channel, its number of fields and field/JSON value pairs (state among them), its
// number of outbox fields and their name/value pairs. Answers, for each request, its outcome and its state now
// (JSON-encoded).
const CREATE = new RedisScript(
  `
local at = cjson.encode(ARGV[2])
local outbox = ARGV[3] == '1'
local restartable = tonumber(ARGV[4])
local cursor = 5 + restartable
local answers = {}
for k = outbox and 2 or 1, #KEYS, 2 do
  local record, history = KEYS[k], KEYS[k + 1]
  local channel, count = ARGV[cursor], tonumber(ARGV[cursor + 1])
  local first, last = cursor + 2, cursor + 1 + 2 * count
  local entryCount = tonumber(ARGV[last + 1])
  local entryFirst, entryLast = last + 2, last + 1 + 2 * entryCount
  cursor = entryLast + 1
  local state
  for i = first, last, 2 do if ARGV[i] == 'state' then state = ARGV[i + 1] end end
  local current = redis.call('HGET', record, 'state')
  local outcome = current and 'existing' or 'created'
  if current then
    for i = 5, 4 + restartable do if current == ARGV[i] then outcome = 'restarted' end end
  end
  if outcome == 'existing' then
    table.insert(answers, outcome)
    table.insert(answers, current)
  else
    local version = 1
    local createdAt = at
    if current then
      version = tonumber(redis.call('HGET', record, 'version') or '0') + 1
      createdAt = redis.call('HGET', record, 'createdAt') or at
      redis.call('DEL', record)
    end
    local parts = {}
    for i = first, last, 2 do table.insert(parts, '"' .. ARGV[i] .. '":' .. ARGV[i + 1]) end
    redis.call('HSET', record, 'version', version, 'createdAt', createdAt, 'updatedAt', at, unpack(ARGV, first, last))
    redis.call('RPUSH', history, '{"state":' .. state .. ',"at":' .. at .. '}')
    redis.call('LTRIM', history, -${HISTORY_LIMIT}, -1)
    redis.call('EXPIRE', record, ARGV[1])
    redis.call('EXPIRE', history, ARGV[1])
    table.insert(parts, '"version":' .. version)
    table.insert(parts, '"createdAt":' .. createdAt)
    table.insert(parts, '"updatedAt":' .. at)
    redis.call('PUBLISH', channel, '{' .. table.concat(parts, ',') .. '}')
    table.insert(answers, outcome)
    table.insert(answers, state)
  end
  -- A new record, or one still in the state it starts with (its entry may have been lost), gets its entry.
  if outbox and entryCount > 0 and (outcome ~= 'existing' or current == state) then
    redis.call('XADD', KEYS[1], '*', 'outcome', outcome, unpack(ARGV, entryFirst, entryLast))
  end
end
return answers
`,
);

// KEYS: record hash, history list. ARGV: ttl, channel, at, number of final states, those states
// (JSON-encoded), then field/JSON value pairs.
const UPDATE = new RedisScript(
  `
local current = redis.call('HGET', KEYS[1], 'state')
if not current then return 0 end
local finals = tonumber(ARGV[4])
for i = 5, 4 + finals do if current == ARGV[i] then return -1 end end
local at = cjson.encode(ARGV[3])
for i = 5 + finals, #ARGV, 2 do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  if ARGV[i] == 'state' and ARGV[i + 1] ~= current then
    redis.call('RPUSH', KEYS[2], '{"state":' .. ARGV[i + 1] .. ',"at":' .. at .. '}')
    redis.call('LTRIM', KEYS[2], -${HISTORY_LIMIT}, -1)
  end
end
redis.call('HINCRBY', KEYS[1], 'version', 1)
redis.call('HSET', KEYS[1], 'updatedAt', at)
redis.call('EXPIRE', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[2], ARGV[1])
local fields = redis.call('HGETALL', KEYS[1])
local parts = {}
for i = 1, #fields, 2 do table.insert(parts, '"' .. fields[i] .. '":' .. fields[i + 1]) end
redis.call('PUBLISH', ARGV[2], '{' .. table.concat(parts, ',') .. '}')
return 1
`,
  2,
);

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
  private subscriber?: Redis;
  private readonly listeners = new Map<string, Set<RequestListener>>();
  private readonly finals: string[];

  constructor(
    private readonly redis: Redis,
    private readonly options: RequestStatusOptions,
  ) {
    this.finals = options.finalStates.map((state) => JSON.stringify(state));
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
   * or when it is already final (a late or repeated step changes nothing).
   */
  async update(referenceId: string, state: string, details: Record<string, unknown> = {}): Promise<boolean> {
    const outcome = (await UPDATE.run(this.redis, this.keys(referenceId), [
      this.options.ttlSeconds,
      this.channel(referenceId),
      new Date().toISOString(),
      this.finals.length,
      ...this.finals,
      ...encodeFields({ ...details, state }),
    ])) as number;
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
      this.subscriber = this.redis.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: 1 });
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
