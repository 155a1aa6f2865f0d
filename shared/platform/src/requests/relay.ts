import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RedisClient } from '../redis/connection.js';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Logger } from '../logging/index.js';
import type { JobQueues, JobsOptions } from '../queues/index.js';
import { openRedis, type RedisEndpoint } from '../redis/index.js';
import { intakeStream, type IntakeEntry } from './intake.js';

export interface IntakeRelayOptions {
  /** The component's Redis (a URL alone: one server). */
  redis: RedisEndpoint | string;
  /** The intake stream (see intakeStream). */
  stream: string;
  queues: JobQueues;
  logger: Logger;
  metrics: Registry;
  /** This relay's name in the stream's consumer group (default: host name and process id). */
  consumer?: string;
  /** Entries read and queued at a time. */
  batchSize?: number;
  /** How long an entry read by a relay that never finished it (it stopped or crashed) waits before another takes it. */
  claimIdleMs?: number;
  /** How long one read waits for new entries. */
  blockMs?: number;
}

const GROUP = 'relay';
/** Relays gone this long with nothing pending are dropped from the group. */
const FORGET_CONSUMER_MS = 3600_000;

type StreamEntry = [id: string, fields: string[] | null];
interface Moved {
  referenceId: string;
  queue: string;
  name: string;
  data: unknown;
  opts: JobsOptions;
  outcome: string;
}

/** The job an entry stands for, or undefined when the entry is gone or malformed. */
function entryOf(fields: string[] | null): Moved | undefined {
  if (!fields) return undefined;
  const entry: Partial<IntakeEntry & { outcome: string }> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) entry[fields[i] as keyof IntakeEntry] = fields[i + 1] as string;
  const { referenceId, queue, name, data, opts, outcome } = entry;
  if (!referenceId || !queue || !name || data === undefined || opts === undefined || !outcome) return undefined;
  try {
    return { referenceId, queue, name, data: JSON.parse(data), opts: JSON.parse(opts) as JobsOptions, outcome };
  } catch {
    return undefined;
  }
}

/**
 * Moves the requests an api accepted from the service's intake stream into their BullMQ queues: reads a batch
 * of entries as a member of the stream's consumer group, adds their jobs (one pipeline per queue, each job's
 * id its referenceId, so adding twice keeps one job), then acknowledges and deletes the entries.
 *
 * An entry is deleted only after its job is in its queue. Entries a relay read and did not finish are read
 * again by the same relay after an error, or at its next start under the same name; after `claimIdleMs`
 * another relay takes them over. A request that starts over (its record was failed) has its failed job
 * removed first; a job in any other state is left alone, so a repeated move never runs a request twice.
 */
export class IntakeRelay {
  private readonly connection: RedisClient;
  private readonly probe: RedisClient;
  private readonly consumer: string;
  private readonly batchSize: number;
  private readonly claimIdleMs: number;
  private readonly blockMs: number;
  private readonly relayed: Counter<'queue'>;
  private running?: Promise<void>;
  private stopping = false;
  private reading = false;
  private readonly stopped = new AbortController();

  constructor(private readonly options: IntakeRelayOptions) {
    // Reads block, and while Redis is away commands wait for it; the backlog gauge has a connection that fails fast.
    this.connection = openRedis(options.redis, 'blocking');
    this.probe = openRedis(options.redis, 'failFast');
    this.consumer = options.consumer ?? `${hostname()}-${process.pid}`;
    this.batchSize = options.batchSize ?? 500;
    this.claimIdleMs = options.claimIdleMs ?? 30_000;
    this.blockMs = options.blockMs ?? 2_000;
    const registers = [options.metrics];
    // One set of metrics per registry, whatever the number of relays.
    const existing = options.metrics.getSingleMetric('intake_relayed_total') as Counter<'queue'> | undefined;
    this.relayed =
      existing ??
      new Counter({
        name: 'intake_relayed_total',
        help: 'Accepted requests moved from the intake stream into their queue, by queue',
        labelNames: ['queue'],
        registers,
      });
    const probe = this.probe;
    if (!existing)
      new Gauge({
        name: 'intake_backlog',
        help: 'Accepted requests waiting in the intake stream for a relay to queue them, read at scrape time',
        registers,
        async collect() {
          const timeout = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 1000).unref());
          const length = await Promise.race([probe.xlen(options.stream).catch(() => undefined), timeout]);
          if (length !== undefined) this.set(length);
        },
      });
  }

  start(): void {
    this.running ??= this.run();
  }

  /**
   * Lets the batch under way finish for up to `graceMs`, then closes the connections. A batch that cannot finish
   * leaves its entries in the stream for the next relay. While Redis is away the loop is not waited for past the
   * grace: a command queued for the reconnection never settles once ioredis closes its connection, so the loop
   * stays parked on it and holds nothing that keeps the process alive.
   */
  async stop(graceMs = 5_000): Promise<void> {
    this.stopping = true;
    this.stopped.abort();
    if (this.reading || !this.running) this.connection.disconnect();
    await Promise.race([this.running, sleep(graceMs, undefined, { ref: false })]);
    this.connection.disconnect();
    this.probe.disconnect();
  }

  private async run(): Promise<void> {
    let groupReady = false;
    let ownPending = true;
    let nextClaim = 0;
    let failures = 0;
    while (!this.stopping) {
      try {
        if (!groupReady) {
          await this.createGroup();
          groupReady = true;
        }
        if (Date.now() >= nextClaim) {
          await this.claimAbandoned();
          nextClaim = Date.now() + this.claimIdleMs / 2;
        }
        // After an error (or at a start under a name used before), what this relay read and did not finish.
        const entries = await this.read(ownPending ? '0' : '>');
        if (ownPending && entries.length === 0) ownPending = false;
        await this.move(entries);
        if (failures > 0) this.options.logger.info({ stream: this.options.stream }, 'intake relay recovered');
        failures = 0;
      } catch (error) {
        if (this.stopping) break;
        ownPending = true;
        if (error instanceof Error && error.message.startsWith('NOGROUP')) groupReady = false;
        if (failures++ === 0)
          this.options.logger.warn({ err: error, stream: this.options.stream }, 'intake relay failed; retrying');
        await sleep(Math.min(5_000, 100 * 2 ** failures), undefined, { signal: this.stopped.signal }).catch(
          () => undefined,
        );
      }
    }
  }

  private async createGroup(): Promise<void> {
    try {
      // From the stream's start: entries written before the group existed are moved too.
      await this.connection.xgroup('CREATE', this.options.stream, GROUP, '0', 'MKSTREAM');
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('BUSYGROUP')) throw error;
    }
  }

  private async read(from: '0' | '>'): Promise<StreamEntry[]> {
    this.reading = true;
    try {
      const { stream } = this.options;
      const answer = (
        from === '>'
          ? await this.connection.xreadgroup(
              'GROUP',
              GROUP,
              this.consumer,
              'COUNT',
              this.batchSize,
              'BLOCK',
              this.blockMs,
              'STREAMS',
              stream,
              from,
            )
          : await this.connection.xreadgroup(
              'GROUP',
              GROUP,
              this.consumer,
              'COUNT',
              this.batchSize,
              'STREAMS',
              stream,
              from,
            )
      ) as [string, StreamEntry[]][] | null;
      return answer?.[0]?.[1] ?? [];
    } finally {
      this.reading = false;
    }
  }

  /** Takes over the entries other relays read and left unfinished, and forgets relays long gone. */
  private async claimAbandoned(): Promise<void> {
    let cursor = '0-0';
    do {
      const [next, entries] = (await this.connection.xautoclaim(
        this.options.stream,
        GROUP,
        this.consumer,
        this.claimIdleMs,
        cursor,
        'COUNT',
        this.batchSize,
      )) as [string, StreamEntry[]];
      await this.move(entries);
      cursor = next;
    } while (cursor !== '0-0' && !this.stopping);
    const consumers = (await this.connection.xinfo('CONSUMERS', this.options.stream, GROUP)) as (string | number)[][];
    for (const fields of consumers) {
      const info = Object.fromEntries(fields.flatMap((value, i) => (i % 2 === 0 ? [[value, fields[i + 1]]] : [])));
      if (info.name !== this.consumer && info.pending === 0 && Number(info.idle) > FORGET_CONSUMER_MS)
        await this.connection.xgroup('DELCONSUMER', this.options.stream, GROUP, String(info.name));
    }
  }

  private async move(entries: StreamEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const byQueue = new Map<string, Moved[]>();
    for (const [id, fields] of entries) {
      const entry = entryOf(fields);
      // An entry deleted after it was read (its job was queued) has no fields left; one without the fields a
      // job needs can never be queued. Both are acknowledged below.
      if (!entry) {
        if (fields) this.options.logger.error({ stream: this.options.stream, id }, 'malformed intake entry dropped');
        continue;
      }
      const list = byQueue.get(entry.queue);
      if (list) list.push(entry);
      else byQueue.set(entry.queue, [entry]);
    }
    for (const [name, moved] of byQueue) {
      const queue = this.options.queues.queue(name);
      for (const entry of moved) {
        if (entry.outcome !== 'restarted') continue;
        const job = await queue.getJob(entry.referenceId);
        if (job && (await job.getState()) === 'failed') await job.remove();
      }
      await queue.addBulk(
        moved.map((entry) => ({
          name: entry.name,
          data: entry.data,
          opts: { ...entry.opts, jobId: entry.referenceId },
        })),
      );
      this.relayed.inc({ queue: name }, moved.length);
    }
    const ids = entries.map(([id]) => id);
    await this.connection
      .multi()
      .xack(this.options.stream, GROUP, ...ids)
      .xdel(this.options.stream, ...ids)
      .exec();
  }
}

/** A job that an api accepted and no relay has moved into its queue yet. */
export interface WaitingJob {
  queue: string;
  name: string;
  data: unknown;
  opts: JobsOptions;
}

/**
 * The job of the request `referenceId` while it still waits in an intake stream, looking through at most `limit`
 * entries from the newest back (for development look-ups: a request accepted while no worker runs).
 */
export async function waitingIntakeJob(
  redis: RedisClient,
  stream: string,
  referenceId: string,
  limit = 10_000,
): Promise<WaitingJob | undefined> {
  const page = 500;
  let end = '+';
  for (let read = 0; read < limit; read += page) {
    const entries = (await redis.xrevrange(stream, end, '-', 'COUNT', page)) as StreamEntry[];
    for (const [, fields] of entries) {
      const entry = entryOf(fields);
      if (entry?.referenceId === referenceId)
        return { queue: entry.queue, name: entry.name, data: entry.data, opts: entry.opts };
    }
    if (entries.length < page) return undefined;
    end = `(${(entries[entries.length - 1] as StreamEntry)[0]}`;
  }
  return undefined;
}

/** Starts the relay of a worker component for its service's intake stream (see intakeStream); stop it first on shutdown. */
export function startIntakeRelay(
  runtime: {
    config: { CACHE_KEY_PREFIX: string };
    redisEndpoint: RedisEndpoint;
    queues: JobQueues;
    logger: Logger;
    metrics: Registry;
  },
  service: string,
): IntakeRelay {
  const { config, queues, logger, metrics } = runtime;
  const relay = new IntakeRelay({
    redis: runtime.redisEndpoint,
    stream: intakeStream(config.CACHE_KEY_PREFIX, service),
    queues,
    logger,
    metrics,
  });
  relay.start();
  return relay;
}
