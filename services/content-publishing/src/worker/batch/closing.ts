import type { Joined } from '../../jobs/batch.js';
import type { OpenBatch } from './book.js';

/** A `close` job to add: which batch, under which job id (one per batch and reason), after how long. */
export interface CloseOrder {
  batchId: string;
  schemaId: number;
  jobId: string;
  delayMs: number;
}

/**
 * The timer of an open batch: it closes `intervalMs` after its first row (at once when that time has passed).
 * One job id per batch, so arming it again (a retried job, a restart) adds nothing while it waits.
 */
export function closeWhenDue(batch: OpenBatch, intervalMs: number, now: number): CloseOrder {
  return {
    batchId: batch.batchId,
    schemaId: batch.schemaId,
    jobId: `due-${batch.batchId}`,
    delayMs: Math.max(0, batch.openedAt + intervalMs - now),
  };
}

/**
 * What a row joining a batch asks of the closer: the row that fills the batch closes it at once; the first row
 * arms its timer; a request that had joined before (its job retried) arms it again, in case the timer was lost
 * with the attempt that joined (the same job id: nothing new while one waits); other rows ask nothing.
 */
export function closeAfterJoin(joined: Joined, intervalMs: number, now: number): CloseOrder | undefined {
  switch (joined.outcome) {
    case 'refused':
      return undefined;
    case 'joined-before':
      return closeWhenDue({ ...joined, openedAt: now }, intervalMs, now);
    case 'joined':
      if (joined.closed)
        return { batchId: joined.batchId, schemaId: joined.schemaId, jobId: `full-${joined.batchId}`, delayMs: 0 };
      return joined.rows === 1 ? closeWhenDue(joined, intervalMs, now) : undefined;
  }
}
