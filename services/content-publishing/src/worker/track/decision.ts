import { chainErrorText, expiryReason, type TransactionOutcome } from '@frequency-gateway/chain';
import type { PublishError } from '../requestRecords.js';
import type { MessageState, PublicationRecord } from '../publish/publications.js';

/** Chain errors after which the same messages may succeed later: the block was full. */
const RETRIABLE = new Set(['messages.TooManyMessagesInBlock']);

/** What a publication's requests come to once a transaction outcome is applied to its messages. */
export type Verdict =
  /** Every message is in a finalized block: the last one's transaction and block finalize the requests. */
  | { kind: 'finalize'; txHash: string; blockHash: string; blockNumber: number }
  /** A message cannot be published: the requests fail with its error. */
  | { kind: 'fail'; error: PublishError }
  /** Messages wait to go again: after a block when the chain refused them, at once when their era ran out. */
  | { kind: 'publish-again'; afterABlock: boolean }
  /** Other messages are still on their way. */
  | { kind: 'wait' };

export interface Decision {
  /** New states of the messages the transaction carried (only those it last carried). */
  changes: Map<number, MessageState>;
  /** The publication's retries, this one counted. */
  attempts: number;
  /** Messages that must go alone from now on. */
  solo: number[];
  verdict: Verdict;
}

/**
 * What a settled transaction does to the messages of one publication it carried (`indices`), and what that
 * means for the publication's requests. Only the transaction a message last went in counts (an earlier one may
 * expire later). Success finalizes a message; a full block or an expired era sends it again, counted, up to
 * `maxAttempts` retries, after which it fails with the last reason (a runtime upgrade that came first counts as an
 * expired era); a packed transaction that failed for another
 * reason (`batch_all` fails as a whole) sends each of its messages again alone, uncounted, so that only the one
 * the chain refuses fails; a message that failed alone fails.
 *
 * The same outcome settled again (the tracker scans a block again after a crash or a Redis failover lost what
 * followed the messages' new states) changes nothing but gives the same verdict, so that what the verdict does
 * (the requests' end and their webhooks, a retry job) is done again, idempotently, in case it was lost.
 * Undefined when the outcome concerns none of the messages any longer.
 */
export function decide(
  record: PublicationRecord,
  indices: readonly number[],
  outcome: TransactionOutcome,
  maxAttempts: number,
): Decision | undefined {
  const packed = outcome.jobs.length > 1;
  const changes = new Map<number, MessageState>();
  const solo: number[] = [];
  let counted = false;
  let lastError: PublishError | undefined;
  let again = false;
  const { txHash } = outcome;
  for (const index of indices) {
    const current = record.messages[index];
    if (current && settledBy(current, txHash)) {
      again = true;
      continue;
    }
    if (current?.state !== 'submitted' || current.txHash !== txHash) continue;
    if (outcome.status === 'succeeded') {
      const { blockNumber, blockHash } = outcome;
      changes.set(index, { state: 'finalized', txHash, blockNumber, blockHash });
    } else if (outcome.status === 'expired') {
      changes.set(index, { state: 'pending', after: txHash });
      counted = true;
      lastError = { message: expiryReason(outcome), expired: true };
    } else if (RETRIABLE.has(chainErrorText(outcome.error))) {
      changes.set(index, { state: 'pending', after: txHash });
      counted = true;
      lastError = outcome.error;
    } else if (packed && !record.solo.has(index)) {
      changes.set(index, { state: 'pending', after: txHash });
      solo.push(index);
    } else {
      changes.set(index, { state: 'failed', error: outcome.error, txHash });
    }
  }
  if (changes.size === 0 && !again) return undefined;
  const attempts = record.attempts + (counted ? 1 : 0);
  if (attempts > maxAttempts && lastError) {
    for (const [index, state] of changes)
      if (state.state === 'pending') changes.set(index, { state: 'failed', error: lastError, txHash });
  }
  const messages = record.messages.map((state, index) => changes.get(index) ?? state);
  return { changes, attempts, solo, verdict: verdictOf(messages, outcome) };
}

/** The message is in the state this transaction's outcome put it in: the outcome is being settled again. */
function settledBy(state: MessageState, txHash: string): boolean {
  switch (state.state) {
    case 'finalized':
      return state.txHash === txHash;
    case 'pending':
      return state.after === txHash;
    case 'failed':
      return state.txHash === txHash;
    case 'submitted':
      return false;
  }
}

/** The publication's verdict from the states of all its messages. */
function verdictOf(messages: MessageState[], outcome: TransactionOutcome): Verdict {
  const failed = messages.find((state) => state.state === 'failed');
  if (failed?.state === 'failed') return { kind: 'fail', error: failed.error };
  const finalized = messages.flatMap((state) => (state.state === 'finalized' ? [state] : []));
  if (finalized.length === messages.length) {
    const last = finalized.reduce((latest, state) => (state.blockNumber > latest.blockNumber ? state : latest));
    return { kind: 'finalize', txHash: last.txHash, blockHash: last.blockHash, blockNumber: last.blockNumber };
  }
  if (messages.some((state) => state.state === 'pending'))
    return { kind: 'publish-again', afterABlock: outcome.status === 'failed' };
  return { kind: 'wait' };
}
