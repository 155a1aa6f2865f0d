import { DEFAULT_WEBHOOK_QUEUE } from '@frequency-gateway/webhooks';

/** Queues of the account service, shared by its api (producer) and worker (consumer). */
export const ACCOUNT_QUEUES = {
  /** Chain transactions to sign and submit with the provider key. */
  transactionPublish: 'transactionPublish',
  /** Transaction notifications on their way to the application (the worker's durable webhook delivery). */
  webhook: DEFAULT_WEBHOOK_QUEUE,
} as const;
