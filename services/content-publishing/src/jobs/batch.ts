/**
 * The batch stage's contract: its door, through which the document stage's announcements join a batch (and a
 * failed request is withdrawn before it joins), and what goes on batchQueue, added by the stage itself (its
 * closing rules). The document stage knows the batch stage by this contract only.
 */
import type { AnnouncementType } from '@frequency-gateway/dsnp';
import type { ContentKind } from './document.js';

/**
 * One announcement row as it waits in a batch: JSON-safe (the user id as decimal text), with the column names
 * of the DSNP Parquet models. The batch writer gives the user id back its integer type.
 */
export type AnnouncementRow = {
  announcementType: AnnouncementType;
  fromId: string;
} & Record<string, string | number>;

/** An announcement row and, for a broadcast, reply, update or profile, the text of its ActivityStreams document. */
export interface Announcement {
  row: AnnouncementRow;
  document?: string;
}

/** One acceptance of a request: the same request accepted again after it failed is another. */
export interface Acceptance {
  referenceId: string;
  /** When the api accepted it (ISO 8601). */
  acceptedAt: string;
}

/** What joining came to. */
export type Joined =
  /** The row is in the batch, which now has `rows` rows; `closed` when this row filled it. */
  | { outcome: 'joined'; batchId: string; schemaId: number; rows: number; openedAt: number; closed: boolean }
  /** This acceptance had joined the batch before (a retried job). */
  | { outcome: 'joined-before'; batchId: string; schemaId: number }
  /** This acceptance may not join: it was withdrawn (its request failed), or a later one holds the request. */
  | { outcome: 'refused' };

/** What withdrawing came to: only a `withdrawn` acceptance may be failed by the document stage. */
export type Withdrawal = { outcome: 'withdrawn' } | { outcome: 'joined'; batchId: string } | { outcome: 'superseded' };

/** The batch stage's door, which the document stage hands its announcements to. */
export interface BatchDoor {
  /** The request's row joins the open batch of the schema (one atomic decision with withdrawing). */
  join(schemaId: number, request: Acceptance & { kind: ContentKind }, announcement: Announcement): Promise<Joined>;
  /** The request failed for good: it may not join any more, unless it has already. */
  withdraw(request: Acceptance): Promise<Withdrawal>;
}

/** batchQueue's one job name. */
export const CLOSE_BATCH_JOB = 'close';

/** batchQueue job `close`: close a batch (its interval is up, or it is full) and write it. */
export interface CloseBatchJob {
  batchId: string;
  schemaId: number;
}
