import { createHash } from 'node:crypto';
import { Counter, type Registry } from 'prom-client';
import { serviceUnavailable } from '../http/errors.js';
import type { Logger } from '../logging/index.js';
import type { JobQueues, JobsOptions } from '../queues/index.js';
import type { RequestStatusStore } from './store.js';

/** JSON with object keys sorted at every level and bigints as decimal strings: one text per value. */
export function canonicalJson(value: unknown): string {
  if (typeof value === 'bigint') return JSON.stringify(value.toString());
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const object = value as Record<string, unknown>;
  // The default sort orders by UTF-16 code units, as comparing with < does.
  const keys = Object.keys(object).sort();
  let text = '{';
  for (const key of keys) {
    const item = object[key];
    if (item === undefined) continue;
    text += `${text.length > 1 ? ',' : ''}${JSON.stringify(key)}:${canonicalJson(item)}`;
  }
  return `${text}}`;
}

/** The id of a request: the same request (after validation) always gets the same id. */
export function referenceIdOf(kind: string, identity: unknown): string {
  return createHash('sha256').update(kind).update('\0').update(canonicalJson(identity)).digest('base64url');
}

/** Retries of a job, and how long finished jobs stay visible in /queues. */
export const DEFAULT_JOB_OPTIONS: JobsOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 2_000 },
  removeOnComplete: { age: 24 * 3600, count: 10_000 },
  removeOnFail: { age: 7 * 24 * 3600 },
};

export interface Accepted {
  referenceId: string;
  /** False when the same request had been accepted before (nothing new was queued). */
  fresh: boolean;
  /** The request's state now (`queued` when fresh). */
  state: string;
}

export interface IntakeOptions {
  /** Names the counter `<service>_requests_accepted_total`. */
  service: string;
  /** The BullMQ options of every job (the job id is always the referenceId). */
  jobOptions?: JobsOptions;
}

export interface IntakeRequest<T> {
  kind: string;
  /** What makes two requests the same one (the validated body, the user, the route). */
  identity: unknown;
  queue: string;
  /** The job's name on the queue board, or how to make it from the referenceId. */
  jobName: string | ((referenceId: string) => string);
  job: (referenceId: string) => T;
  /** Shown in the request record. */
  msaId?: string | undefined;
  /** More fields of the record from the start. */
  details?: Record<string, unknown>;
}

/**
 * Accepting a request: a deterministic referenceId, a status record, and a job in Redis before the caller
 * hears back. The same request posted again returns the same id and queues nothing new, unless it had failed:
 * then it starts over.
 */
export class Intake {
  private readonly accepted: Counter<'kind' | 'outcome'>;

  constructor(
    private readonly queues: JobQueues,
    private readonly status: RequestStatusStore,
    private readonly logger: Logger,
    metrics: Registry,
    private readonly options: IntakeOptions,
  ) {
    this.accepted = new Counter({
      name: `${options.service}_requests_accepted_total`,
      help: 'Requests accepted, by kind and whether they were new or repeated',
      labelNames: ['kind', 'outcome'],
      registers: [metrics],
    });
  }

  async accept<T>(request: IntakeRequest<T>): Promise<Accepted> {
    const referenceId = referenceIdOf(request.kind, request.identity);
    const queue = this.queues.queue(request.queue);
    try {
      const record = await this.status.create(
        referenceId,
        { ...request.details, state: 'queued', kind: request.kind, msaId: request.msaId },
        ['failed'],
      );
      if (record === 'restarted') await queue.remove(referenceId).catch(() => 0);
      // A repeated request whose record is still queued gets its job added again: harmless (BullMQ keeps one
      // job per id) and it puts back a job lost between a record and its job. The worker moves a record off
      // queued when it takes the job, so a request under way or done is never queued twice.
      const state = record === 'existing' ? ((await this.status.get(referenceId))?.state ?? 'queued') : 'queued';
      const add = state === 'queued';
      if (add) {
        try {
          const name = typeof request.jobName === 'string' ? request.jobName : request.jobName(referenceId);
          await queue.add(name, request.job(referenceId), {
            ...(this.options.jobOptions ?? DEFAULT_JOB_OPTIONS),
            jobId: referenceId,
          });
        } catch (error) {
          if (record === 'created') await this.status.remove(referenceId).catch(() => undefined);
          throw error;
        }
      }
      this.accepted.inc({ kind: request.kind, outcome: record === 'existing' ? 'repeated' : 'new' });
      return { referenceId, fresh: record !== 'existing', state };
    } catch (error) {
      this.logger.warn({ err: error, kind: request.kind }, 'could not queue a request');
      throw serviceUnavailable('The request could not be queued (Redis is not reachable); try again');
    }
  }
}
