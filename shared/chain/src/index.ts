export {
  connectChain,
  openChain,
  ChainNotReadyError,
  type ChainConnection,
  type ConnectOptions,
  type OpeningChain,
} from './connection.js';
export {
  chainVariables,
  signingChainVariables,
  submissionVariables,
  chainCheck,
  chainTiming,
  msaIdText,
  nodeUrls,
} from './config.js';
export { ChainTiming, ChainTimingError, type ChainTimingSettings } from './timing.js';
export { loadProviderKey, verifyProvider, ProviderIdentityError, type ProviderKey } from './provider.js';
export { NonceManager, SIGNING_KEYSPACE, type NonceManagerOptions } from './nonces.js';
export { CapacitySubmitter, type SignedTransaction, type SubmitterOptions, type BeforeSubmit } from './submitter.js';
export {
  SubmissionError,
  submissionError,
  alreadyImported,
  chainError,
  chainErrorText,
  decodeDispatchError,
  foreseenChainError,
  type ChainError,
} from './transactionErrors.js';
export {
  RecordTooLateError,
  ScanPositionMovedError,
  TransactionSettledError,
  TransactionTracker,
  expiryReason,
  type RecordWrite,
  type TransactionOutcome,
  type TrackerOptions,
  type ChainEvent,
} from './tracker/index.js';
export { submitRecorded, type Recording, type Submission } from './recordedSubmission.js';
export {
  ChainQueries,
  type Delegation,
  type Grant,
  type Intent,
  type Schema,
  type Handle,
  type CapacityInfo,
  type ChainMessage,
} from './queries.js';
export {
  signatureParts,
  verifyExactly,
  ethereumAccountId,
  isEthereumAccount,
  ethereumAddressOf,
  signatureReadings,
  type SignatureParts,
  type UserSignature,
} from './signatures/verify.js';
export { eip712Message, DEV_CHAIN_ID, MAINNET_CHAIN_ID, type Eip712Payload } from './signatures/eip712.js';
export { chainTypeOf, eip712ChainIdOf, type ChainType } from './network.js';
export { verifyPayloadSignature } from './signatures/payload.js';
export { SignedPayloads, type ItemAction, type PayloadWindow } from './payloads.js';
export {
  CapacityMonitor,
  CapacityLimitError,
  parseCapacityLimit,
  type CapacityLimit,
  type CapacityLimits,
  type CapacityMonitorOptions,
  type CapacityState,
  type Pausable,
} from './capacity.js';
export { connectAsProvider, type ProviderChain } from './providerChain.js';
export { messageCalls, accountCalls, type AccountCall } from './calls.js';
export { SchemaDirectory } from './directory.js';
export { DelegationGate, type DelegationRefusal } from './delegationGate.js';
export { fromChain, chainUnreachable, isChainUnreachable } from './unreachable.js';
export {
  startWhenChainReady,
  type ChainPipeline,
  type PipelineStartOptions,
  type StartAttempt,
} from './pipelineStart.js';
export { followTransactions, type FollowOptions } from './transactionFollowing.js';
export {
  CapacityPipeline,
  CapacityShortError,
  waitingOutTheChain,
  type CapacityPipelineConfig,
  type FollowingOptions,
} from './capacityPipeline.js';
export {
  UserTransactions,
  UserTransactionError,
  type UserCall,
  type PreparedUserTransaction,
  type SignedUserTransaction,
  type CheckedUserTransaction,
} from './userTransactions.js';
export {
  accountIdOf,
  bytesOfHex,
  hexOf,
  publicKeyOf,
  ss58Of,
  textOfHex,
  type ChainApi,
  type ChainCall,
  type ChainValue,
} from './encoding.js';
export { requestErrorSchema, transactionRequestFields } from './requestFields.js';
