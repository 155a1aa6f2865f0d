import { randomUUID } from 'node:crypto';
import { DelayedError, Queue, Worker, type AdvancedOptions, type Job, type JobsOptions } from 'bullmq';
import type { RedisClient } from '../redis/connection.js';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Logger } from '../logging/index.js';
import {
  openRedis,
  RedisAvailability,
  redisFailureOf,
  registerRedisMemoryGauges,
  type RedisEndpoint,
} from '../redis/index.js';
import { ReplicatedWrites, type Durability } from '../redis/durability.js';
import { failFastBackend } from './failFastBackend.js';
import { isLastAttempt } from './retention.js';
import { inSpan, SpanKind, takeTraceContext, withTraceContext } from '../tracing/index.js';

export { DelayedError, UnrecoverableError } from 'bullmq';
export type { Job, JobsOptions } from 'bullmq';

const JOB_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed'] as const;

export interface JobContext {
  /** Logger carrying the queue name and job id. */
  log: Logger;
  /** The worker's lock token for the job (for `job.moveToDelayed(timestamp, token)`). */
  token: string | undefined;
  /** This run's own id, new for every run of the job: the fencing token of the run's claims (RunClaim). */
  run: string;
}

export type JobProcessor<T, R> = (job: Job<T, R>, context: JobContext) => Promise<R>;

export interface JobQueuesOptions {
  /** The component's Redis (a URL alone: one server). */
  redis: RedisEndpoint | string;
  /** The service's keyspace (CACHE_KEY_PREFIX as parsed, `{prefix}`); BullMQ keys live under `<keyspace>:bull`. */
  keyPrefix: string;
  logger: Logger;
  metrics: Registry;
  /** What the component knows about Redis (see RedisAvailability); the queues' connections report to it. */
  availability?: RedisAvailability;
  /**
   * Acknowledged = durable (REDIS_DURABILITY=replicated): a job completes only once what it wrote, on the
   * queues' own connection and on `writtenOn`, reached a replica (see ReplicatedWrites); otherwise its attempt
   * fails and it is tried again.
   */
  durability?: { durability: Durability; writtenOn: RedisClient[] };
}

export interface WorkerOptions<T = unknown, R = unknown> {
  concurrency?: number;
  /**
   * Called when a job fails its last attempt (the processor threw, not DelayedError), before BullMQ marks it
   * failed: where a service ends the request the job stood for. An error it throws is logged; the job fails.
   * `context` is the failed run's (its `run` fences what it ends).
   */
  lastAttemptFailed?: (job: Job<T, R>, error: unknown, context: JobContext) => Promise<void>;
  /** BullMQ worker settings, e.g. a custom `backoffStrategy` for jobs with `backoff: {type: <custom>}`. */
  settings?: AdvancedOptions;
  /**
   * BullMQ's job lock (ms): a run that has not renewed it for this long (renewed every half of it) counts as
   * stalled, and its job is run again. Unset: BullMQ's (30 s).
   */
  lockDuration?: number;
  /** How often BullMQ looks for jobs whose lock lapsed (ms). Unset: BullMQ's (30 s). */
  stalledInterval?: number;
  /**
   * With durability: whether a job's writes are confirmed on a replica before it completes (the default). Off for
   * jobs whose work leaves the process and writes nothing of its own (a webhook delivery): a failed confirmation
   * would only do that work again.
   */
  confirmWrites?: boolean;
}

/**
 * BullMQ queues and workers of one component, on ioredis, with one key prefix and the metrics an operator
 * needs: depth by queue and state, and job outcomes and durations.
 */
export class JobQueues {
  private readonly queues = new Map<string, Queue>();
  private readonly workers: Worker[] = [];
  private readonly producer: RedisClient;
  private readonly consumerConnection: RedisClient;
  readonly prefix: string;
  private readonly outcomes: Counter<'queue' | 'outcome'>;
  private readonly durations: Histogram<'queue' | 'outcome'>;
  private readonly availability: RedisAvailability;
  /** With durability: what confirms a job's writes (and a caller's, such as a transaction's record). */
  readonly replicatedWrites: ReplicatedWrites | undefined;

  constructor(private readonly options: JobQueuesOptions) {
    this.prefix = `${options.keyPrefix}:bull`;
    this.availability = options.availability ?? new RedisAvailability({ logger: options.logger });
    // Producers fail fast while Redis is away (callers answer 503); consumers wait for it to come back.
    this.producer = this.availability.watch(openRedis(options.redis, 'failFast'));
    this.consumerConnection = this.availability.watch(openRedis(options.redis, 'blocking'));
    this.replicatedWrites =
      options.durability &&
      new ReplicatedWrites(
        [this.producer, ...options.durability.writtenOn],
        options.durability.durability,
        options.keyPrefix,
      );
    const registers = [options.metrics];
    this.outcomes = new Counter({
      name: 'queue_jobs_processed_total',
      help: 'Jobs processed by this component, by queue and outcome',
      labelNames: ['queue', 'outcome'],
      registers,
    });
    this.durations = new Histogram({
      name: 'queue_job_duration_seconds',
      help: 'Time spent processing a job, by queue and outcome',
      labelNames: ['queue', 'outcome'],
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      registers,
    });
    const queues = this.queues;
    new Gauge({
      name: 'queue_jobs',
      help: 'Jobs in each queue by state, read from Redis at scrape time',
      labelNames: ['queue', 'state'],
      registers,
      async collect() {
        const counts = await Promise.all(
          [...queues.values()].map(async (queue) => {
            const timeout = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 1000).unref());
            const read = queue.getJobCounts(...JOB_STATES).catch(() => undefined);
            return [queue.name, await Promise.race([read, timeout])] as const;
          }),
        );
        this.reset();
        for (const [name, byState] of counts) {
          if (!byState) continue;
          for (const state of JOB_STATES) this.set({ queue: name, state }, byState[state] ?? 0);
        }
      },
    });
    new Gauge({
      name: 'queue_oldest_waiting_seconds',
      help: 'Age of the oldest job waiting to be processed (since it became due), by queue; 0 when none waits',
      labelNames: ['queue'],
      registers,
      async collect() {
        const now = Date.now();
        const ages = await Promise.all(
          [...queues.values()].map(async (queue) => {
            const timeout = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 1000).unref());
            // Ascending: the first of the waiting list is the one that waited longest.
            const read = queue.getJobs(['waiting', 'prioritized'], 0, 0, true).catch(() => undefined);
            const jobs = await Promise.race([read, timeout]);
            if (!jobs) return [queue.name, undefined] as const;
            const due = jobs.map((job) => job.timestamp + (job.delay ?? 0));
            return [queue.name, due.length === 0 ? 0 : Math.max(0, (now - Math.min(...due)) / 1000)] as const;
          }),
        );
        this.reset();
        for (const [name, age] of ages) if (age !== undefined) this.set({ queue: name }, age);
      },
    });
    registerRedisMemoryGauges(options.metrics, this.producer);
  }

  /** The queue of that name (created once, then shared). */
  queue<T = unknown, R = unknown>(name: string, defaultJobOptions?: JobsOptions): Queue<T, R> {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue(
        name,
        { connection: this.producer, prefix: this.prefix, ...(defaultJobOptions ? { defaultJobOptions } : {}) },
        failFastBackend(this.producer, this.availability, this.prefix),
      );
      queue.on('error', (error) => this.reportError(error, { queue: name }, 'queue error'));
      carryTraceContext(queue);
      this.queues.set(name, queue);
    }
    return queue as unknown as Queue<T, R>;
  }

  all(): Queue[] {
    return [...this.queues.values()];
  }

  /** Starts consuming a queue. The processor's outcome and duration are measured here. */
  worker<T, R>(name: string, processor: JobProcessor<T, R>, options: WorkerOptions<T, R> = {}): Worker<T, R> {
    this.queue(name);
    const worker = new Worker<T, R>(
      name,
      async (job, token) => {
        // The span that queued the job is the parent of its processing, in whichever process that was.
        const { data, carrier } = takeTraceContext(job.data);
        job.data = data as T;
        return inSpan(
          `${name} process`,
          {
            kind: SpanKind.CONSUMER,
            ...(carrier ? { parent: carrier } : {}),
            // Put back to wait for later (moveToDelayed) is not a failure.
            notFailure: (error) => error instanceof DelayedError,
            attributes: {
              'messaging.system': 'bullmq',
              'messaging.destination.name': name,
              'messaging.operation.name': 'process',
              'messaging.message.id': job.id ?? '',
              'gateway.job_name': job.name,
              'gateway.attempt': job.attemptsMade + 1,
            },
          },
          () => this.process(name, job, token, processor, options),
        );
      },
      {
        connection: this.consumerConnection,
        prefix: this.prefix,
        concurrency: options.concurrency ?? 1,
        ...(options.settings ? { settings: options.settings } : {}),
        ...(options.lockDuration === undefined ? {} : { lockDuration: options.lockDuration }),
        ...(options.stalledInterval === undefined ? {} : { stalledInterval: options.stalledInterval }),
      },
    );
    worker.on('error', (error) => this.reportError(error, { queue: name }, 'worker error'));
    this.workers.push(worker);
    return worker;
  }

  /** Runs one job: its outcome and duration are measured, a failure logged, a last failed attempt handed on. */
  private async process<T, R>(
    name: string,
    job: Job<T, R>,
    token: string | undefined,
    processor: JobProcessor<T, R>,
    options: WorkerOptions<T, R>,
  ): Promise<R> {
    const log = this.options.logger.child({ queue: name, jobId: job.id });
    const context: JobContext = { log, token, run: randomUUID() };
    const started = process.hrtime.bigint();
    const observe = (outcome: 'completed' | 'failed' | 'delayed') => {
      this.outcomes.inc({ queue: name, outcome });
      this.durations.observe({ queue: name, outcome }, Number(process.hrtime.bigint() - started) / 1e9);
    };
    try {
      const mark = options.confirmWrites === false ? undefined : this.replicatedWrites?.mark();
      const result = await processor(job, context);
      if (mark !== undefined) await this.replicatedWrites!.confirm(mark);
      observe('completed');
      return result;
    } catch (error) {
      // The processor put the job back to wait (moveToDelayed): not a failure.
      if (error instanceof DelayedError) {
        observe('delayed');
        throw error;
      }
      observe('failed');
      log.warn({ err: error, attempt: job.attemptsMade + 1 }, 'job failed');
      if (options.lastAttemptFailed && isLastAttempt(job))
        await options
          .lastAttemptFailed(job, error, context)
          .catch((cause: unknown) =>
            log.error({ err: cause }, 'could not end the request of a job that failed its last attempt'),
          );
      throw error;
    }
  }

  /**
   * Logs a queue's or worker's error, unless it is Redis being unusable: BullMQ reports that once per queue and
   * connection attempt (dozens of identical lines a minute); readiness tells it once and RedisAvailability
   * reminds of it once a minute.
   */
  private reportError(error: Error, context: { queue: string }, message: string): void {
    if (redisFailureOf(error)) return;
    this.options.logger.warn({ ...context, err: error }, message);
  }

  /**
   * Stops taking jobs and waits for active ones to finish, for at most `graceMs`. Jobs still running then
   * are abandoned to BullMQ's stalled-job recovery, which hands them to another worker.
   */
  async closeWorkers(graceMs: number): Promise<boolean> {
    const graceful = Promise.all(this.workers.map((worker) => worker.close())).then(() => true);
    const deadline = new Promise<false>((resolve) => setTimeout(() => resolve(false), graceMs).unref());
    const finished = await Promise.race([graceful, deadline]);
    if (!finished) await Promise.all(this.workers.map((worker) => worker.close(true)));
    return finished;
  }

  async close(graceMs = 10_000): Promise<void> {
    await this.closeWorkers(graceMs);
    await Promise.all(this.all().map((queue) => queue.close()));
    this.producer.disconnect();
    this.consumerConnection.disconnect();
  }
}

/**
 * Every job queued inside a span carries its trace context in its data (see withTraceContext), whichever
 * service code adds it: the queue's own add and addBulk are wrapped once, here. Outside a span nothing changes.
 */
function carryTraceContext(queue: Queue): void {
  const add = queue.add.bind(queue);
  const addBulk = queue.addBulk.bind(queue);
  queue.add = (name, data, opts) => add(name, withTraceContext(data), opts);
  queue.addBulk = (jobs) => addBulk(jobs.map((job) => ({ ...job, data: withTraceContext(job.data) })));
}
