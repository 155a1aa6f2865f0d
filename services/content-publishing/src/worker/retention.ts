const DAY_SECONDS = 24 * 3600;

/** How long the worker keeps its own records in Redis (its jobs' retention is the queue table's, src/queues.ts). */
export const WORKER_RETENTION = {
  /** Which batch a request joined: far longer than any retry of its job may come. */
  membershipSeconds: 7 * DAY_SECONDS,
  /** A publication and the states of its messages: as long as a request record is kept by default. */
  publicationSeconds: 30 * DAY_SECONDS,
} as const;
