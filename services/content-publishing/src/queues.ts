/** Queues of the content publishing service, shared by its api (producer) and worker (consumer). */
export const CONTENT_PUBLISHING_QUEUES = {
  /** Uploaded assets awaiting their reference from an announcement. */
  asset: 'assetQueue',
  /** Accepted announcement requests, turned into DSNP content by the worker. */
  request: 'requestQueue',
  /** Closed batches to write as Parquet files. */
  batch: 'batchQueue',
  /** Messages to publish on chain. */
  publish: 'publishQueue',
} as const;
