import { JOB_RETENTION, type JobsOptions } from '@frequency-gateway/platform';
import { DEFAULT_WEBHOOK_QUEUE } from '@frequency-gateway/webhooks';

/** Queues of the account service, shared by its api (producer) and worker (consumer). */
export const ACCOUNT_QUEUES = {
  /** Chain transactions to sign and submit with the provider key. */
  transactionPublish: 'transactionPublish',
  /** Transaction notifications on their way to the application (the worker's durable webhook delivery). */
  webhook: DEFAULT_WEBHOOK_QUEUE,
} as const;

/** The options of the jobs the service adds, by queue (webhook deliveries set their own). */
export const ACCOUNT_JOB_OPTIONS = {
  // A transaction job retries its submission a few times (the node away, a nonce race); its outcome on chain is
  // the tracker's business, not the job's.
  [ACCOUNT_QUEUES.transactionPublish]: {
    attempts: 5,
    backoff: { type: 'exponential', delay: 2_000 },
    ...JOB_RETENTION,
  },
} as const satisfies Record<string, JobsOptions>;
