import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { RedisScript, scanKeys, type RedisClient, type TraceCarrier } from '@frequency-gateway/platform';
import type { Acceptance, Announcement, AnnouncementRow, Joined, Withdrawal } from '../../jobs/batch.js';
import { WORKER_RETENTION } from '../retention.js';

const scriptFile = (name: string) => new URL(`./${name}.lua`, import.meta.url);

/**
 * join.lua and withdraw.lua decide alike where an acceptance of a request stands: membership.lua's `standingOf`
 * is put before each (a Redis script cannot call another); their KEYS/ARGV headers stay in the text.
 */
function withStanding(name: string, numberOfKeys: number): RedisScript {
  const text = (file: string) => readFileSync(scriptFile(file), 'utf8');
  return new RedisScript(`${text('membership')}\n${text(name)}`, numberOfKeys);
}

const JOIN = withStanding('join', 2);
const WITHDRAW = withStanding('withdraw', 1);
const CLOSE = RedisScript.fromFile(scriptFile('close'), 2);
const WRITTEN = RedisScript.fromFile(scriptFile('written'), 1);
const ABANDON = RedisScript.fromFile(scriptFile('abandon'), 1);

export interface ClosedBatch {
  batchId: string;
  schemaId: number;
  /** Rows by referenceId, ordered by referenceId (the same file whoever writes it). */
  rows: [string, AnnouncementRow][];
  /** The ActivityStreams documents the rows point at, by referenceId, in the same order. */
  documents: Map<string, string>;
  /** The batch file, once it is stored (see `written`): what is left is handing it to the publish stage. */
  file?: { cid: string; size: number };
  /** Its job failed for good and its requests with it (see `abandon`): nothing is left to do. */
  abandoned?: true;
  /** The trace contexts of the rows' requests (those traced), for the batch's span to link to. */
  traces: TraceCarrier[];
}

/** An open batch, for the timers re-armed at start. */
export interface OpenBatch {
  batchId: string;
  schemaId: number;
  openedAt: number;
}

/**
 * Open batches of announcements in Redis, one per schema. Joining, withdrawing and closing are atomic scripts
 * (join.lua, withdraw.lua, close.lua), so with any number of workers a row joins exactly one batch, an
 * acceptance of a request joins at most once (its membership outlives the batch) and never once withdrawn, and
 * a batch closes once: at its maximum row count, or when its interval is up, whichever is first. Once closed, a
 * batch is either published or failed, never both: written.lua and abandon.lua make that one decision.
 */
export class BatchBook {
  private readonly prefix: string;

  constructor(
    private readonly redis: RedisClient,
    keyPrefix: string,
    private readonly options: { maxRows: number; membershipSeconds?: number },
  ) {
    this.prefix = `${keyPrefix}:batch:`;
  }

  private get membershipSeconds(): number {
    return this.options.membershipSeconds ?? WORKER_RETENTION.membershipSeconds;
  }

  private openKey(schemaId: number): string {
    return `${this.prefix}open:${schemaId}`;
  }

  private batchKey(batchId: string): string {
    return `${this.prefix}${batchId}`;
  }

  private membershipKey(referenceId: string): string {
    return `${this.prefix}member:${referenceId}`;
  }

  /** `trace`: the trace context of the request's span, kept with its row for the batch's span to link to. */
  async join(
    schemaId: number,
    request: Acceptance,
    { row, document }: Announcement,
    trace?: TraceCarrier,
  ): Promise<Joined> {
    const [batchId, rows, openedAt, closed] = (await JOIN.run(
      this.redis,
      [this.openKey(schemaId), this.membershipKey(request.referenceId)],
      [
        this.prefix,
        randomUUID(),
        schemaId,
        request.referenceId,
        JSON.stringify(row),
        this.options.maxRows,
        Date.now(),
        this.membershipSeconds,
        document ?? '',
        request.acceptedAt,
        trace ? JSON.stringify(trace) : '',
      ],
    )) as [string, number, number, number];
    if (rows === -2) return { outcome: 'refused' };
    if (rows === -1) return { outcome: 'joined-before', batchId, schemaId };
    return { outcome: 'joined', batchId, schemaId, rows, openedAt, closed: closed === 1 };
  }

  /** Withdraws the acceptance from batching unless it joined a batch (withdraw.lua). */
  async withdraw(request: Acceptance): Promise<Withdrawal> {
    const [outcome, batchId] = (await WITHDRAW.run(
      this.redis,
      [this.membershipKey(request.referenceId)],
      [request.acceptedAt, this.membershipSeconds],
    )) as [Withdrawal['outcome'], string];
    return outcome === 'joined' ? { outcome, batchId } : { outcome };
  }

  /** Closes the batch (if it still is open) and reads its rows; undefined when it was written and cleared. */
  async close(batchId: string, schemaId: number): Promise<ClosedBatch | undefined> {
    const key = this.batchKey(batchId);
    const present = (await CLOSE.run(this.redis, [key, this.openKey(schemaId)], [batchId])) as number;
    if (present === 0) return undefined;
    const [stored, documents, traces, [cid, size, state]] = await Promise.all([
      this.redis.hgetall(`${key}:rows`),
      this.redis.hgetall(`${key}:documents`),
      this.redis.hgetall(`${key}:traces`),
      this.redis.hmget(key, 'fileCid', 'fileSize', 'state'),
    ]);
    const rows = Object.entries(stored)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([referenceId, json]): [string, AnnouncementRow] => [referenceId, JSON.parse(json) as AnnouncementRow]);
    return {
      batchId,
      schemaId,
      rows,
      documents: new Map(
        rows.flatMap(([referenceId]): [string, string][] => {
          const document = documents[referenceId];
          return document === undefined ? [] : [[referenceId, document]];
        }),
      ),
      traces: rows.flatMap(([referenceId]) => traceCarrierOf(traces[referenceId])),
      ...(cid && size ? { file: { cid, size: Number(size) } } : {}),
      ...(state === 'abandoned' ? { abandoned: true as const } : {}),
    };
  }

  /**
   * Takes requests' rows out of a closed batch (their requests failed on their own): the file is written
   * without them, and a retried job does not meet them again.
   */
  async remove(batchId: string, referenceIds: string[]): Promise<void> {
    if (referenceIds.length === 0) return;
    const key = this.batchKey(batchId);
    await this.redis
      .multi()
      .hdel(`${key}:rows`, ...referenceIds)
      .hdel(`${key}:documents`, ...referenceIds)
      .hdel(`${key}:traces`, ...referenceIds)
      .exec();
  }

  /**
   * Notes that the batch's file is stored: from now on its rows are published, never failed with the batch
   * (written.lua). False when the batch is gone or was abandoned: the file must not be handed on.
   */
  async written(batchId: string, file: { cid: string; size: number }): Promise<boolean> {
    return (await WRITTEN.run(this.redis, [this.batchKey(batchId)], [file.cid, file.size])) === 1;
  }

  /** The batch's job failed for good: abandons the batch unless its file is stored (abandon.lua). */
  async abandon(batchId: string): Promise<'gone' | 'written' | 'abandoned'> {
    return (await ABANDON.run(this.redis, [this.batchKey(batchId)])) as 'gone' | 'written' | 'abandoned';
  }

  /** Forgets a written batch (the memberships stay, so a late retry of a request does not publish it twice). */
  async clear(batchId: string): Promise<void> {
    const key = this.batchKey(batchId);
    await this.redis.del(key, `${key}:rows`, `${key}:documents`, `${key}:traces`);
  }

  /** Open batches and when they opened. */
  async open(): Promise<OpenBatch[]> {
    const found: OpenBatch[] = [];
    for await (const key of scanKeys(this.redis, `${this.prefix}open:*`)) {
      const batchId = await this.redis.get(key);
      if (!batchId) continue;
      const openedAt = Number(await this.redis.hget(this.batchKey(batchId), 'openedAt'));
      found.push({ batchId, schemaId: Number(key.slice(`${this.prefix}open:`.length)), openedAt });
    }
    return found;
  }
}

/** A stored trace context, or nothing when there is none or it is not one (never fails a batch). */
function traceCarrierOf(stored: string | undefined): TraceCarrier[] {
  if (!stored) return [];
  try {
    const parsed = JSON.parse(stored) as Partial<TraceCarrier>;
    return typeof parsed.traceparent === 'string' ? [parsed as TraceCarrier] : [];
  } catch {
    return [];
  }
}
