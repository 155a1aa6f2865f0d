/** The batch stage's job contract: what goes on batchQueue, added by the stage itself (its closing rules). */

/** batchQueue's one job name. */
export const CLOSE_BATCH_JOB = 'close';

/** batchQueue job `close`: close a batch (its interval is up, or it is full) and write it. */
export interface CloseBatchJob {
  batchId: string;
  schemaId: number;
}
