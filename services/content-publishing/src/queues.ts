import { JOB_RETENTION, type JobsOptions } from '@frequency-gateway/platform';

/** Queues of the content publishing service, shared by its api (producer) and worker (producer and consumer). */
export const CONTENT_PUBLISHING_QUEUES = {
  /** Uploaded assets awaiting their reference from an announcement. */
  asset: 'assetQueue',
  /** Accepted announcement requests, turned into DSNP documents and batched (worker/document). */
  request: 'requestQueue',
  /** Batches to close and write as Parquet files (worker/batch). */
  batch: 'batchQueue',
  /** Messages to publish on chain (worker/publish). */
  publish: 'publishQueue',
} as const;

export type ContentPublishingQueue = (typeof CONTENT_PUBLISHING_QUEUES)[keyof typeof CONTENT_PUBLISHING_QUEUES];

const exponential = (delay: number) => ({ type: 'exponential', delay }) as const;

/**
 * The options of every job of each queue, whoever adds it (the api through the intake, or a stage): how often it
 * is tried and how long it is kept. A job failing its last attempt fails its requests, so the queues whose jobs
 * carry many (a batch, a batch's publication) are tried longer: 10 attempts span about 17 minutes.
 */
export const CONTENT_PUBLISHING_JOB_OPTIONS = {
  assetQueue: { ...JOB_RETENTION },
  requestQueue: { attempts: 5, backoff: exponential(2_000), ...JOB_RETENTION },
  batchQueue: { attempts: 10, backoff: exponential(1_000), ...JOB_RETENTION },
  publishQueue: { attempts: 10, backoff: exponential(2_000), ...JOB_RETENTION },
} as const satisfies Record<ContentPublishingQueue, JobsOptions>;

const isServiceQueue = (name: string): name is ContentPublishingQueue =>
  Object.hasOwn(CONTENT_PUBLISHING_JOB_OPTIONS, name);

/** The job options of a queue of the service (none for another queue). */
export function jobOptionsOf(queue: string): JobsOptions {
  return isServiceQueue(queue) ? CONTENT_PUBLISHING_JOB_OPTIONS[queue] : {};
}
