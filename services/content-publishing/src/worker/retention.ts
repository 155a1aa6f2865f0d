const DAY_SECONDS = 24 * 3600;

/** How long the worker keeps its own records in Redis (its jobs' retention is the queue table's, src/queues.ts). */
export const WORKER_RETENTION = {
  /**
   * Which batch a request joined (one key per request, the bulk of the worker's keys at a steady rate): far longer
   * than any retry of its job may come.
   */
  membershipSeconds: 7 * DAY_SECONDS,
  /** A publication and the states of its messages: as long as a request record is kept by default. */
  publicationSeconds: 30 * DAY_SECONDS,
} as const;

/**
 * The shortest a membership or a publication is kept when REQUEST_STATUS_TTL_SECONDS is short: longer than the
 * automatic retries of their jobs (a request job's 5 attempts span about 30 s, a publish job's 10 about 17 minutes),
 * so that a retry still finds them.
 */
const FLOOR_SECONDS = { membership: 10 * 60, publication: 30 * 60 } as const;

/**
 * How long a request's batch membership is kept: a week, or as long as its record (REQUEST_STATUS_TTL_SECONDS)
 * when that is shorter — once the record is gone the request is forgotten, and so may its membership be.
 */
export function batchMembershipSeconds(requestStatusTtlSeconds: number): number {
  return Math.min(WORKER_RETENTION.membershipSeconds, Math.max(FLOOR_SECONDS.membership, requestStatusTtlSeconds));
}

/** How long a publication is kept after its last change: as long as its requests' records, within the bounds. */
export function publicationSeconds(requestStatusTtlSeconds: number): number {
  return Math.min(WORKER_RETENTION.publicationSeconds, Math.max(FLOOR_SECONDS.publication, requestStatusTtlSeconds));
}
