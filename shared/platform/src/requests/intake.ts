import { hash } from 'node:crypto';
import { Counter, type Registry } from 'prom-client';
import { serviceUnavailable } from '../http/errors.js';
import type { Logger } from '../logging/index.js';
import { JOB_RETENTION, type JobsOptions } from '../queues/index.js';
import { TurnBatch, type ItemOutcome } from '../redis/turnBatch.js';
import { durabilityOf, type Durability, type ReplicatedWrites } from '../redis/durability.js';
import { withTraceContext } from '../tracing/index.js';
import type { RequestStatusStore } from './requestStatusStore.js';

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
  return hash('sha256', `${kind}\0${canonicalJson(identity)}`, 'base64url');
}

/** Retries of a job, and how long finished jobs stay visible in /queues. */
export const DEFAULT_JOB_OPTIONS: JobsOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 2_000 },
  ...JOB_RETENTION,
};

export interface Accepted {
  referenceId: string;
  /** False when the same request had been accepted before (nothing new was queued). */
  fresh: boolean;
  /** The request's state now (`queued` when fresh). */
  state: string;
}

/** The Redis stream where an api's accepted requests wait for a worker's relay to queue them. */
export function intakeStream(keyPrefix: string, service: string): string {
  return `${keyPrefix}:intake:${service}`;
}

/** The fields of an intake stream entry (the script adds `outcome`: created, restarted or existing). */
export type IntakeEntry = {
  referenceId: string;
  queue: string;
  name: string;
  /** The job's data, as JSON. */
  data: string;
  /** The job's BullMQ options, as JSON (its id is the referenceId). */
  opts: string;
};

export interface IntakeOptions {
  /** Names the counter `<service>_requests_accepted_total`. */
  service: string;
  /** The intake stream (see intakeStream), which the service's workers relay into their queues. */
  stream: string;
  /**
   * The BullMQ options of the jobs (the job id is always the referenceId): the same for every queue, or each
   * queue's own (a service's table of queues). Default: DEFAULT_JOB_OPTIONS.
   */
  jobOptions?: JobsOptions | ((queue: string) => JobsOptions);
  /**
   * Acknowledged = durable: a request is answered only once its record and job reached this many replicas
   * (WAIT), within `timeoutMs`; otherwise the answer is a 503 (the same request again is safe: it has the same
   * referenceId). Unset: answered once the primary has them.
   */
  durability?: Durability;
}

export interface IntakeRequest<T> {
  kind: string;
  /** What makes two requests the same one (the validated body, the user, the route). */
  identity: unknown;
  queue: string;
  /** The job's name on the queue board, or how to make it from the referenceId. */
  jobName: string | ((referenceId: string) => string);
  job: (referenceId: string) => T;
  /** More fields of the record from the start (whom the request is for, say); undefined ones are left out. */
  details?: Record<string, unknown>;
}

interface Submitted {
  request: IntakeRequest<unknown>;
  entry: IntakeEntry;
}

/**
 * Accepting a request: a deterministic referenceId, a status record, and the job in Redis before the caller
 * hears back. The same request posted again returns the same id and queues nothing new, unless it had failed:
 * then it starts over.
 *
 * The job goes to the service's intake stream, in the script that writes the record (one round trip, and the
 * record never exists without its job); the workers' IntakeRelay moves it into its BullMQ queue. Requests
 * accepted in the same turn of the event loop share that script, so a busy api makes one round trip per turn
 * rather than per request.
 */
/** IntakeOptions' durability as an api's REDIS_DURABILITY and REDIS_DURABILITY_TIMEOUT_MS set it (none: acknowledged). */
export function intakeDurability(config: {
  REDIS_DURABILITY: 'acknowledged' | 'replicated';
  REDIS_DURABILITY_TIMEOUT_MS: number;
}): Pick<IntakeOptions, 'durability'> {
  const durability = durabilityOf(config);
  return durability ? { durability } : {};
}

export class Intake {
  private readonly accepted: Counter<'kind' | 'outcome'>;
  private readonly batch = new TurnBatch<Submitted, Accepted>((items) => this.write(items));
  /** Each queue's job options, as the intake entry carries them (JSON). */
  private readonly jobOptions = new Map<string, string>();
  /** With durability: confirms each turn's writes on a replica before its requests are answered. */
  private readonly replicatedWrites: ReplicatedWrites | undefined;

  constructor(
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
    this.replicatedWrites = options.durability && status.replicatedWrites(options.durability);
  }

  private jobOptionsOf(queue: string): string {
    let options = this.jobOptions.get(queue);
    if (options === undefined) {
      const given = this.options.jobOptions ?? DEFAULT_JOB_OPTIONS;
      options = JSON.stringify(typeof given === 'function' ? given(queue) : given);
      this.jobOptions.set(queue, options);
    }
    return options;
  }

  async accept<T>(request: IntakeRequest<T>): Promise<Accepted> {
    const referenceId = referenceIdOf(request.kind, request.identity);
    const entry: IntakeEntry = {
      referenceId,
      queue: request.queue,
      name: typeof request.jobName === 'string' ? request.jobName : request.jobName(referenceId),
      // The job's processing continues the request's trace, through the relay and whichever worker takes it.
      data: JSON.stringify(withTraceContext(request.job(referenceId))),
      opts: this.jobOptionsOf(request.queue),
    };
    try {
      const accepted = await this.batch.submit({ request, entry });
      this.accepted.inc({ kind: request.kind, outcome: accepted.fresh ? 'new' : 'repeated' });
      return accepted;
    } catch (error) {
      this.logger.debug({ err: error, kind: request.kind }, 'could not queue a request');
      // The HTTP layer adds why, when it knows (Redis refused the credentials, or cannot be reached), and logs
      // the cause on the request's line.
      throw serviceUnavailable('The request could not be queued', error);
    }
  }

  /** Records a turn's requests and appends their jobs to the intake stream, in one script. */
  private async write(items: Submitted[]): Promise<ItemOutcome<Accepted>[]> {
    const mark = this.replicatedWrites?.mark();
    const records = await this.status.createMany(
      items.map(({ request, entry }) => ({
        referenceId: entry.referenceId,
        fields: { ...request.details, state: 'queued', kind: request.kind },
        entry,
      })),
      // A repeated request whose record is still queued gets its entry again: harmless (BullMQ keeps one job
      // per id) and it puts back a job lost on the way. The worker moves a record off queued when it takes the
      // job, so a request under way or done is never queued twice.
      { restartFrom: ['failed'], outbox: this.options.stream },
    );
    // A connection lost between the script and WAIT may have taken the writes with the old primary, and WAIT on
    // its successor answers at once: the mark catches that.
    if (mark !== undefined) await this.replicatedWrites?.confirm(mark);
    return records.map(({ outcome, state }, index) => ({
      ok: true,
      value: { referenceId: (items[index] as Submitted).entry.referenceId, fresh: outcome !== 'existing', state },
    }));
  }
}
