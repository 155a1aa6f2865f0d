/**
 * What the api puts on the queues and the worker takes off them. Every job carries its request's
 * referenceId (also its BullMQ job id), so the worker can move the request's status along.
 */

/** The DSNP announcement kinds a content request can make. */
export type ContentKind = 'broadcast' | 'reply' | 'reaction' | 'update' | 'tombstone' | 'profile';

/** An uploaded asset as the api found it in the catalog when the request was accepted. */
export interface AssetInfo {
  cid: string;
  dsnpHash: string;
  mimeType: string;
  size: number;
  type: 'image' | 'video' | 'audio' | 'parquet';
}

/** requestQueue, job name `content`: a DSNP announcement to build, store and batch. */
export interface ContentRequestJob {
  referenceId: string;
  kind: ContentKind;
  /** The user the content is from (decimal MSA id). */
  msaId: string;
  /** The validated request body (BroadcastDto, ReplyDto, ...), unknown fields dropped. */
  body: Record<string, unknown>;
  /** Every asset the body references, by CID. */
  assets: Record<string, AssetInfo>;
  acceptedAt: string;
}

/** A Parquet batch file already in IPFS, to announce under a schema. */
export interface BatchFile {
  cid: string;
  schemaId: number;
}

/** publishQueue, job name `batch-files`: batch files announced as they are (v2 and v3 batch announcements). */
export interface BatchFilesJob {
  referenceId: string;
  files: BatchFile[];
  acceptedAt: string;
}

/** publishQueue, job name `on-chain`: a message stored on chain (v3 on-chain content). */
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

export const JOB_NAMES = { content: 'content', batchFiles: 'batch-files', onChain: 'on-chain' } as const;
