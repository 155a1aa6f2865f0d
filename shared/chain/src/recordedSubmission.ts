import type { RunClaim } from '@frequency-gateway/platform';
import { SubmissionError } from './transactionErrors.js';
import type { BeforeSubmit, SignedTransaction } from './submitter.js';
import {
  RecordTooLateError,
  TransactionSettledError,
  type RecordWrite,
  type TransactionTracker,
} from './tracker/index.js';

/** How a transaction is recorded, and forgotten again if the node refuses it. */
export interface Recording {
  tracker: TransactionTracker;
  /** What rides in the transaction: what its outcome settles. */
  jobs: string[];
  /** The caller's writes that go with the record (the request's link to it, its messages' states). */
  writes(transaction: SignedTransaction): RecordWrite[];
  /** The caller's writes that go with forgetting it (undoing `writes`). */
  undo: RecordWrite[];
  /** What the job run must still hold for the record (and the forgetting) to be written. */
  claims: readonly RunClaim[];
}

export type Submission =
  | { kind: 'submitted'; transaction: SignedTransaction }
  /**
   * Recorded, and its fate is the tracker's: recorded too late to submit now (the scan submits it), settled
   * already, or submitted without an answer (a dropped connection).
   */
  | { kind: 'tracked'; txHash: string; cause: unknown };

/**
 * Signs, records and submits one transaction (through `send`, which calls the recording between signing and
 * submitting), and reads what happened, the same way for every pipeline that signs:
 * - submitted: the node took it;
 * - tracked: its record stays and the tracker settles it;
 * - a SubmissionError thrown: the node refused it for good, and its record was forgotten with `undo` (unless the
 *   run lost its claims meanwhile: then StaleRunError);
 * - a StaleRunError thrown: a later run of the job holds the claims; nothing was recorded or submitted (a
 *   capacity submitter uses up the transaction's nonce);
 * - anything else thrown: it failed before its record was written.
 */
export async function submitRecorded(
  send: (beforeSubmit: BeforeSubmit) => Promise<SignedTransaction>,
  recording: Recording,
): Promise<Submission> {
  const { tracker, jobs, claims } = recording;
  let recorded: string | undefined;
  try {
    const transaction = await send(async (signed) => {
      await tracker.record(signed, jobs, recording.writes(signed), claims);
      recorded = signed.hash;
    });
    return { kind: 'submitted', transaction };
  } catch (error) {
    if (error instanceof RecordTooLateError || error instanceof TransactionSettledError)
      return { kind: 'tracked', txHash: error.txHash, cause: error };
    if (recorded === undefined) throw error;
    if (error instanceof SubmissionError && error.kind !== 'rpc') {
      await tracker.forget(recorded, recording.undo, claims);
      throw error;
    }
    return { kind: 'tracked', txHash: recorded, cause: error };
  }
}
