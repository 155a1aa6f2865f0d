/** The kinds of transaction the account service submits, as its webhooks name them. */
export const TRANSACTION_TYPES = [
  'SIWF_SIGNUP',
  'CREATE_HANDLE',
  'CHANGE_HANDLE',
  'ADD_KEY',
  'ADD_PUBLIC_KEY_AGREEMENT',
  'RETIRE_MSA',
  'REVOKE_DELEGATION',
  'CAPACITY_BATCH',
] as const;
export type TransactionType = (typeof TRANSACTION_TYPES)[number];

/** One user-signed call of a transaction job, as SCALE hex (decoded again by the worker's runtime). */
export interface EncodedCall {
  pallet: string;
  extrinsicName: string;
  encodedExtrinsic: `0x${string}`;
}

/** A transaction the user signed with their own key: the extrinsic, the payload they signed and their signature. */
export interface UserSignedTransaction {
  encodedExtrinsic: `0x${string}`;
  payloadToSign: `0x${string}`;
  /** As the user sent it (checked against the payload by the api, and again by the worker). */
  signature: string;
}

/**
 * A `transactionPublish` job. Either `calls` the user signed, wrapped by the provider in one capacity-paid
 * `payWithCapacity` (one call) or `payWithCapacityBatchAll` (several); or a `userSigned` transaction the
 * worker submits as the user signed it (retiring an MSA, revoking a delegation). The job id is the referenceId.
 */
export type TransactionJob = {
  type: TransactionType;
  referenceId: string;
  providerId: string;
  /** The user's AccountId32 (0x-hex; Ethereum keys in their 32-byte unified form). */
  accountId: `0x${string}`;
  /**
   * A job sending the request again: the hash of its transaction that expired before it was included (its era
   * ended, or a runtime upgrade came first). It signs anew only while that one is still the request's transaction.
   */
  after?: string;
  /** How many times the request was sent again so far. */
  resent?: number;
} & ({ calls: EncodedCall[]; userSigned?: undefined } | { userSigned: UserSignedTransaction; calls?: undefined });

/** `Transaction Job - <referenceId>`, the job name the queue board shows. */
export const transactionJobName = (referenceId: string) => `Transaction Job - ${referenceId}`;
