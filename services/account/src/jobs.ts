/** The kinds of transaction the account service submits, as its webhooks name them. */
export const TRANSACTION_TYPES = [
  'SIWF_SIGNUP',
  'CREATE_HANDLE',
  'CHANGE_HANDLE',
  'ADD_KEY',
  'ADD_PUBLIC_KEY_AGREEMENT',
] as const;
export type TransactionType = (typeof TRANSACTION_TYPES)[number];

/** One user-signed call of a transaction job, as SCALE hex (decoded again by the worker's runtime). */
export interface EncodedCall {
  pallet: string;
  extrinsicName: string;
  encodedExtrinsic: `0x${string}`;
}

/**
 * A `transactionPublish` job: calls the user signed, wrapped by the provider in one capacity-paid
 * `payWithCapacity` (one call) or `payWithCapacityBatchAll` (several). The job id is the referenceId.
 */
export interface TransactionJob {
  type: TransactionType;
  referenceId: string;
  providerId: string;
  /** The user's AccountId32 (0x-hex; Ethereum keys in their 32-byte unified form). */
  accountId: `0x${string}`;
  calls: EncodedCall[];
}

/** `Transaction Job - <referenceId>`, the job name the queue board shows. */
export const transactionJobName = (referenceId: string) => `Transaction Job - ${referenceId}`;
