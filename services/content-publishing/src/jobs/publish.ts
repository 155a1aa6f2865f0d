/**
 * The publish stage's job contract: publishQueue carries four job shapes, each named, from three producers —
 * `batch` from the batch stage, `batch-files` and `on-chain` from the api (through the intake), `retry` from the
 * track stage. A job's name tells its data (PublishJob), so no producer or consumer casts a queue.
 */
import type { TraceCarrier } from '@frequency-gateway/platform';

/** A Parquet batch file already in IPFS, to announce under a schema. */
export interface BatchFile {
  cid: string;
  schemaId: number;
}

/** `batch`: an announcement batch file the batch stage wrote, for the requests whose rows it holds. */
export interface AnnouncementBatchJob {
  batchId: string;
  schemaId: number;
  cid: string;
  /** The file's length in bytes (the message's payloadLength). */
  size: number;
  referenceIds: string[];
  /** With tracing on: the trace contexts of the requests' spans, which the publish job's span links to. */
  memberTraces?: TraceCarrier[];
}

/** `batch-files`: batch files announced as they are (v2 and v3 batch announcements). */
export interface BatchFilesJob {
  referenceId: string;
  files: BatchFile[];
  acceptedAt: string;
}

/** `on-chain`: a message stored on chain (v3 on-chain content). */
export interface OnChainJob {
  referenceId: string;
  schemaId: number;
  intentId: number;
  /** 0x-hex bytes in the schema's model. */
  payload: string;
  published: string;
  /** The user the provider publishes for (delegation checked); absent: the provider itself. */
  onBehalfOf?: string;
  acceptedAt: string;
}

/** `retry`: publish the pending messages of a publication again (after a full block, an expiry, a packed failure). */
export interface RetryJob {
  publicationId: string;
}

/** The data of each publish job, by name. */
export interface PublishJobs {
  batch: AnnouncementBatchJob;
  'batch-files': BatchFilesJob;
  'on-chain': OnChainJob;
  retry: RetryJob;
}

export type PublishJobName = keyof PublishJobs;

export const PUBLISH_JOB_NAMES = {
  announcementBatch: 'batch',
  batchFiles: 'batch-files',
  onChain: 'on-chain',
  retry: 'retry',
} as const satisfies Record<string, PublishJobName>;

/** A publish job as the stage reads it: the name, and the data that name carries. */
export type PublishJob = { [Name in PublishJobName]: { name: Name; data: PublishJobs[Name] } }[PublishJobName];

const NAMES = new Set<string>(Object.values(PUBLISH_JOB_NAMES));

/** A job of publishQueue as its contract says; a name the contract does not know is an error (another version). */
export function publishJobOf(job: { name: string; data: unknown }): PublishJob {
  if (!NAMES.has(job.name)) throw new Error(`publishQueue has no job named ${job.name}`);
  // The name is one of the contract's: its data is that name's (every producer adds it through a typed hand-off).
  return { name: job.name, data: job.data } as PublishJob;
}
