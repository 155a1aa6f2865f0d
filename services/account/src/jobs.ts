/** The kinds of transaction the account service submits, as its webhooks name them. */
export type TransactionType = 'SIWF_SIGNUP';

/** One user-signed call of a transaction job, as SCALE hex (decoded again by the worker's runtime). */
export interface EncodedCall {
  pallet: string;
  extrinsicName: string;
  encodedExtrinsic: `0x${string}`;
}

/**
 * A `transactionPublish` job: calls the user signed, to be wrapped in one capacity-paid
 * `payWithCapacityBatchAll` by the provider. The job id is the referenceId.
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
