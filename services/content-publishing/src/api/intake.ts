import { createHash } from 'node:crypto';
import {
  serviceUnavailable,
  type JobsOptions,
  type JobQueues,
  type Logger,
  type RequestStatusStore,
} from '@frequency-gateway/platform';
import { Counter, type Registry } from 'prom-client';

/** JSON with object keys sorted at every level and bigints as decimal strings: one text per value. */
export function canonicalJson(value: unknown): string {
  if (typeof value === 'bigint') return JSON.stringify(value.toString());
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The id of a request: the same request (after validation) always gets the same id. */
export function referenceIdOf(kind: string, identity: unknown): string {
  return createHash('sha256').update(kind).update('\0').update(canonicalJson(identity)).digest('base64url');
}

/** How long finished jobs stay visible in /queues and /dev/request. */
const JOB_OPTIONS: JobsOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 2_000 },
  removeOnComplete: { age: 24 * 3600, count: 10_000 },
  removeOnFail: { age: 7 * 24 * 3600 },
};

export interface Accepted {
  referenceId: string;
  /** False when the same request had been accepted before (nothing new was queued). */
  fresh: boolean;
}

export interface IntakeRequest<T> {
  kind: string;
  /** What makes two requests the same one (the validated body, the user, the route). */
  identity: unknown;
  queue: string;
  jobName: string;
  job: (referenceId: string) => T;
  /** Shown in the request record. */
  msaId?: string | undefined;
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
  ) {
    this.accepted = new Counter({
      name: 'content_requests_accepted_total',
      help: 'Publishing requests accepted, by kind and whether they were new or repeated',
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
        { state: 'queued', kind: request.kind, msaId: request.msaId },
        ['failed'],
      );
      if (record === 'restarted') await queue.remove(referenceId).catch(() => 0);
      // A repeated request whose record is still queued gets its job added again: harmless (BullMQ keeps one
      // job per id) and it puts back a job lost between a record and its job. The worker moves a record off
      // queued when it takes the job, so a request under way or done is never queued twice.
      const add = record !== 'existing' || (await this.status.get(referenceId))?.state === 'queued';
      if (add) {
        try {
          await queue.add(request.jobName, request.job(referenceId), { ...JOB_OPTIONS, jobId: referenceId });
        } catch (error) {
          if (record === 'created') await this.status.remove(referenceId).catch(() => undefined);
          throw error;
        }
      }
      this.accepted.inc({ kind: request.kind, outcome: record === 'existing' ? 'repeated' : 'new' });
      return { referenceId, fresh: record !== 'existing' };
    } catch (error) {
      this.logger.warn({ err: error, kind: request.kind }, 'could not queue a request');
      throw serviceUnavailable('The request could not be queued (Redis is not reachable); try again');
    }
  }
}
