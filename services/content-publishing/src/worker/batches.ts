import { randomUUID } from 'node:crypto';
import { RedisScript } from '@frequency-gateway/platform';
import type { Redis } from 'ioredis';
import type { Announcement, AnnouncementRow } from './content.js';

/**
 * Adds a row to the open batch of a schema, opening one when there is none.
 * KEYS: open pointer of the schema, membership key of the request.
 * ARGV: key prefix of batches, id for a new batch, schema id, referenceId, row, max rows, now (ms), membership TTL,
 * the row's document ('' when it has none).
 * Returns {batchId, rows (-1: the request already joined a batch), openedAt, closed (1 when this row filled it)}.
 */
const ADD = new RedisScript(
  `
local member = redis.call('GET', KEYS[2])
if member then return {member, -1, 0, 0} end
local id = redis.call('GET', KEYS[1])
if not id then
  id = ARGV[2]
  redis.call('SET', KEYS[1], id)
  redis.call('HSET', ARGV[1] .. id, 'schemaId', ARGV[3], 'openedAt', ARGV[7], 'state', 'open')
end
local meta = ARGV[1] .. id
local rows = meta .. ':rows'
redis.call('HSET', rows, ARGV[4], ARGV[5])
if ARGV[9] ~= '' then redis.call('HSET', meta .. ':documents', ARGV[4], ARGV[9]) end
redis.call('SET', KEYS[2], id, 'EX', ARGV[8])
local count = redis.call('HLEN', rows)
local openedAt = tonumber(redis.call('HGET', meta, 'openedAt'))
if count >= tonumber(ARGV[6]) then
  redis.call('HSET', meta, 'state', 'closed')
  redis.call('DEL', KEYS[1])
  return {id, count, openedAt, 1}
end
return {id, count, openedAt, 0}
`,
  2,
);

/**
 * Closes a batch: no row joins it afterwards. KEYS: the batch, the open pointer of its schema. ARGV: batch id.
 * Returns 0 when the batch is gone (written and cleared before), 1 otherwise (closed now or before).
 */
const CLOSE = new RedisScript(
  `
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return 0 end
if state == 'open' then
  redis.call('HSET', KEYS[1], 'state', 'closed')
  if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
end
return 1
`,
  2,
);

export interface Joined {
  batchId: string;
  /** Rows in the batch now; -1 when the request had joined a batch before (a retried job). */
  rows: number;
  /** When the batch opened (ms); 0 when the request had joined before. */
  openedAt: number;
  /** This row reached the batch's maximum and closed it. */
  closed: boolean;
}

export interface ClosedBatch {
  batchId: string;
  schemaId: number;
  /** Rows by referenceId, ordered by referenceId (the same file whoever writes it). */
  rows: [string, AnnouncementRow][];
  /** The ActivityStreams documents the rows point at, in the same order. */
  documents: string[];
}

/**
 * Open batches of announcements in Redis, one per schema. Joining and closing are atomic scripts, so with any
 * number of workers a row joins exactly one batch, a request joins at most once (its membership outlives the
 * batch), and a batch closes once: at its maximum row count, or when its interval is up, whichever is first.
 */
export class BatchBook {
  private readonly prefix: string;

  constructor(
    private readonly redis: Redis,
    keyPrefix: string,
    private readonly options: { maxRows: number; membershipTtlSeconds?: number },
  ) {
    this.prefix = `${keyPrefix}:batch:`;
  }

  private openKey(schemaId: number): string {
    return `${this.prefix}open:${schemaId}`;
  }

  private batchKey(batchId: string): string {
    return `${this.prefix}${batchId}`;
  }

  async join(schemaId: number, referenceId: string, { row, document }: Announcement): Promise<Joined> {
    const [batchId, rows, openedAt, closed] = (await ADD.run(
      this.redis,
      [this.openKey(schemaId), `${this.prefix}member:${referenceId}`],
      [
        this.prefix,
        randomUUID(),
        schemaId,
        referenceId,
        JSON.stringify(row),
        this.options.maxRows,
        Date.now(),
        this.options.membershipTtlSeconds ?? 7 * 24 * 3600,
        document ?? '',
      ],
    )) as [string, number, number, number];
    return { batchId, rows, openedAt, closed: closed === 1 };
  }

  /** Closes the batch (if it still is open) and reads its rows; undefined when it was written and cleared. */
  async close(batchId: string, schemaId: number): Promise<ClosedBatch | undefined> {
    const key = this.batchKey(batchId);
    const present = (await CLOSE.run(this.redis, [key, this.openKey(schemaId)], [batchId])) as number;
    if (present === 0) return undefined;
    const [stored, documents] = await Promise.all([
      this.redis.hgetall(`${key}:rows`),
      this.redis.hgetall(`${key}:documents`),
    ]);
    const rows = Object.entries(stored)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([referenceId, json]) => [referenceId, JSON.parse(json) as AnnouncementRow] as [string, AnnouncementRow]);
    return {
      batchId,
      schemaId,
      rows,
      documents: rows.flatMap(([referenceId]) => documents[referenceId] ?? []),
    };
  }

  /** Forgets a written batch (the memberships stay, so a late retry of a request does not publish it twice). */
  async clear(batchId: string): Promise<void> {
    const key = this.batchKey(batchId);
    await this.redis.del(key, `${key}:rows`, `${key}:documents`);
  }

  /** Drops the memberships of requests that failed, so that posting them again publishes them. */
  async forget(referenceIds: string[]): Promise<void> {
    if (referenceIds.length > 0) await this.redis.del(...referenceIds.map((id) => `${this.prefix}member:${id}`));
  }

  /** Open batches and when they opened, for the closer that re-arms timers after a restart. */
  async open(): Promise<{ batchId: string; schemaId: number; openedAt: number }[]> {
    const found: { batchId: string; schemaId: number; openedAt: number }[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', `${this.prefix}open:*`, 'COUNT', 100);
      cursor = next;
      for (const key of keys) {
        const batchId = await this.redis.get(key);
        if (!batchId) continue;
        const openedAt = Number(await this.redis.hget(this.batchKey(batchId), 'openedAt'));
        found.push({ batchId, schemaId: Number(key.slice(`${this.prefix}open:`.length)), openedAt });
      }
    } while (cursor !== '0');
    return found;
  }
}
