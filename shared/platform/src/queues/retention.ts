import type { Job, JobsOptions } from 'bullmq';

const DAY_SECONDS = 24 * 3600;

/**
 * How long finished jobs stay in Redis, visible on the queue board: a completed one a day (the newest 10,000 at
 * most), a failed one a week, long enough to look into it and retry it by hand. Every queue of the gateway keeps
 * its jobs so, unless it says why not.
 */
export const JOB_RETENTION = {
  removeOnComplete: { age: DAY_SECONDS, count: 10_000 },
  removeOnFail: { age: 7 * DAY_SECONDS },
} as const satisfies Pick<JobsOptions, 'removeOnComplete' | 'removeOnFail'>;

/** BullMQ retries a failed job while attemptsMade + 1 < attempts: true when this failure is the job's last. */
export function isLastAttempt(job: Pick<Job, 'attemptsMade' | 'opts'>): boolean {
  return job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
}
