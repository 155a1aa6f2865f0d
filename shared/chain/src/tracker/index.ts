export { TransactionTracker } from './transactionTracker.js';
export { RecordTooLateError, TransactionSettledError, type RecordWrite } from './recording.js';
export { ScanPositionMovedError } from './scanning.js';
export type { ChainEvent, TrackerOptions, TransactionOutcome } from './records.js';
