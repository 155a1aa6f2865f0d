export { TransactionTracker } from './transactionTracker.js';
export { RecordTooLateError, TransactionSettledError, type RecordWrite } from './recording.js';
export { ScanPositionMovedError } from './scanning.js';
export { expiryReason, type ChainEvent, type TrackerOptions, type TransactionOutcome } from './records.js';
