export { connectChain, ChainNotReadyError, type ChainConnection, type ConnectOptions } from './connection.js';
export { loadProviderKey, verifyProvider, ProviderIdentityError, type ProviderKey } from './provider.js';
export { NonceManager, type NonceManagerOptions } from './nonces.js';
export { CapacitySubmitter, type SignedTransaction, type SubmitterOptions, type BeforeSubmit } from './submitter.js';
export { SubmissionError, submissionError } from './errors.js';
export { TransactionTracker, type TransactionOutcome, type TrackerOptions, type ChainEvent } from './tracker.js';
export {
  ChainQueries,
  type Delegation,
  type Grant,
  type Intent,
  type Schema,
  type Handle,
  type CapacityInfo,
} from './queries.js';
