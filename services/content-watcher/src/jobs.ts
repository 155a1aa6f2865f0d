/** A search's part of a batch job: whose request it is and where its announcements go. */
export interface SearchTarget {
  requestId: string;
  webhookUrl: string;
  /** Only announcements from these users (MSA ids), when given. */
  dsnpIds?: string[];
}

/** A message found on chain whose announcements are to be delivered: an IPFS batch file, or an on-chain payload. */
export interface BatchJob {
  blockNumber: number;
  index: number;
  intentId: number;
  schemaId: number;
  /** The MSA the message is from (the user, or the provider itself). */
  msaId: string;
  providerId: string;
  cid?: string;
  payload?: `0x${string}`;
  search?: SearchTarget;
}

/**
 * A message's place, per search: the same message found twice (a rescan) is the same job (its BullMQ id is
 * this through bullJobId, since a search's requestId is the client's and may hold anything).
 */
export const batchJobId = (job: Pick<BatchJob, 'blockNumber' | 'intentId' | 'index' | 'search'>) =>
  `${job.search ? `${job.search.requestId}-` : ''}${job.blockNumber}-${job.intentId}-${job.index}`;

/** POST /v1/search as the worker crawls it; `next` is the first block not crawled yet. */
export interface SearchJob {
  requestId: string;
  webhookUrl: string;
  upperBoundBlock?: number;
  blockCount: number;
  intentIds?: number[];
  dsnpIds?: string[];
  next?: number;
  last?: number;
}
