/** Queues of the content watcher service. */
export const CONTENT_WATCHER_QUEUES = {
  /** Searches: a block range crawled for messages. */
  request: 'watcherRequestQueue',
  /** Messages found (DSNP batch files in IPFS, on-chain payloads) whose announcements are to be delivered. */
  contentIpfs: 'watcherContentIpfsQueue',
  /** Announcements on their way to webhooks (durable, signed, retried). */
  delivery: 'watcherDeliveryQueue',
} as const;
