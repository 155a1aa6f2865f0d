import { UnrecoverableError, type JobQueues, type Logger, type OutboundPolicy } from '@frequency-gateway/platform';
import type { Job, JobsOptions, Queue, Worker } from 'bullmq';
import type { Registry } from 'prom-client';
import type { WebhookSettings } from './config.js';
import { deliveryJobId, webhookJob, type Delivery, type WebhookJob } from './webhookJob.js';
import { webhookMetrics, type WebhookMetrics } from './metrics.js';
import { AttemptFailure, postToReceiver, receiverTarget } from './receiverRequest.js';
import { retryDelay } from './retryDelay.js';
import { webhookHeaders } from './signature.js';

export const DEFAULT_WEBHOOK_QUEUE = 'webhookQueue';

/** What a delivered job keeps as its return value (shown on the queue board). */
export interface WebhookResult {
  status: number;
  attempt: number;
}

export interface WebhookDeliveryOptions {
  queues: JobQueues;
  settings: WebhookSettings;
  logger: Logger;
  metrics: Registry;
  /** Where deliveries may go: a refused destination is a dead letter at once, and is never connected to. */
  outbound: OutboundPolicy;
  /** Default `webhookQueue`. */
  queueName?: string;
}

/** A failed attempt with its next attempt planned; BullMQ's backoff strategy reads the delay from it. */
class RetryScheduled extends Error {
  constructor(
    failure: AttemptFailure,
    readonly delayMs: number,
  ) {
    super(`${failure.message}; next attempt in ${delayMs} ms`);
    this.name = 'RetryScheduled';
  }
}

const BACKOFF_TYPE = 'webhook';

/**
 * Durable webhook delivery: each delivery is a BullMQ job (its id the job id), POSTed as signed JSON and
 * retried with exponential backoff until the receiver answers 2xx or the attempts run out. A job that runs out
 * stays in the queue's failed set, the dead letters, from which the queue board can retry it.
 */
export class WebhookDelivery {
  readonly queue: Queue<WebhookJob, WebhookResult>;
  private readonly queueName: string;
  private readonly settings: WebhookSettings;
  private readonly jobOptions: JobsOptions;
  private readonly metrics: WebhookMetrics;
  private worker: Worker<WebhookJob, WebhookResult> | undefined;

  constructor(private readonly options: WebhookDeliveryOptions) {
    this.queueName = options.queueName ?? DEFAULT_WEBHOOK_QUEUE;
    this.settings = options.settings;
    this.jobOptions = {
      attempts: this.settings.maxAttempts,
      backoff: { type: BACKOFF_TYPE },
      removeOnComplete: { age: 24 * 60 * 60, count: 10_000 },
      removeOnFail: false,
    };
    this.queue = options.queues.queue<WebhookJob, WebhookResult>(this.queueName, this.jobOptions);
    this.metrics = webhookMetrics(options.metrics);
  }

  /** Durable: resolves once the delivery is stored in Redis. The same id twice is delivered once. */
  async enqueue(delivery: Delivery): Promise<void> {
    await this.enqueueMany([delivery]);
  }

  /** Stores every delivery in one round trip (nothing is stored when one of them is invalid). */
  async enqueueMany(deliveries: Delivery[]): Promise<void> {
    const jobs = deliveries.map((delivery) => {
      const data = webhookJob(delivery);
      return { name: data.event, data, opts: { ...this.jobOptions, jobId: deliveryJobId(data.id) } };
    });
    if (jobs.length > 0) await this.queue.addBulk(jobs);
  }

  /** Starts delivering (worker components). Idempotent. */
  start(): void {
    if (this.worker) return;
    this.worker = this.options.queues.worker<WebhookJob, WebhookResult>(
      this.queueName,
      (job, { log }) => this.attempt(job, log),
      {
        concurrency: this.settings.concurrency,
        // A delivery writes nothing to Redis but its job's completion: confirming it on a replica (REDIS_DURABILITY)
        // could only fail a delivery that succeeded, and send it again.
        confirmWrites: false,
        // The attempt that failed planned the next one (its backoff, or the receiver's Retry-After).
        settings: {
          backoffStrategy: (attemptsMade, _type, error) =>
            error instanceof RetryScheduled ? error.delayMs : retryDelay(attemptsMade, this.settings),
        },
      },
    );
    this.options.logger.info(
      { queue: this.queueName, concurrency: this.settings.concurrency, signed: this.settings.secret !== undefined },
      'delivering webhooks',
    );
  }

  private async attempt(job: Job<WebhookJob, WebhookResult>, log: Logger): Promise<WebhookResult> {
    const { id, url, event, payload } = job.data;
    const attempt = job.attemptsMade + 1;
    const target = receiverTarget(url);
    const context = { deliveryId: id, event, host: target.host, attempt };
    const headers = {
      'content-type': 'application/json',
      ...this.settings.headers,
      ...webhookHeaders(this.settings.secret, id, Math.floor(Date.now() / 1000), payload),
    };
    const stopTimer = this.metrics.duration.startTimer();
    try {
      const status = await postToReceiver(this.options.outbound, target, payload, headers, this.settings.timeoutMs);
      stopTimer();
      this.metrics.deliveries.inc({ outcome: 'delivered' });
      log.info({ ...context, status }, 'webhook delivered');
      return { status, attempt };
    } catch (error) {
      stopTimer();
      const failure = error instanceof AttemptFailure ? error : new AttemptFailure(String(error));
      if (failure.refused) {
        // No attempt was made and none will be: the destination stays refused until the configuration changes.
        this.metrics.deliveries.inc({ outcome: 'dead_letter' });
        log.error({ ...context, reason: failure.message }, 'webhook destination refused; dead-lettered');
        throw new UnrecoverableError(failure.message);
      }
      // BullMQ retries while attemptsMade + 1 < attempts: this mirrors its decision.
      if (attempt >= (job.opts.attempts ?? 1)) {
        this.metrics.deliveries.inc({ outcome: 'dead_letter' });
        log.error({ ...context, status: failure.status, reason: failure.message }, 'webhook dead-lettered');
        throw failure;
      }
      const delayMs = retryDelay(attempt, this.settings, failure.retryAfterMs);
      this.metrics.deliveries.inc({ outcome: 'retry' });
      log.warn({ ...context, status: failure.status, reason: failure.message, delayMs }, 'webhook attempt failed');
      throw new RetryScheduled(failure, delayMs);
    }
  }
}
