/** Queues of the account service, shared by its api (producer) and worker (consumer). */
export const ACCOUNT_QUEUES = {
  /** Chain transactions to sign and submit with the provider key. */
  transactionPublish: 'transactionPublish',
} as const;
