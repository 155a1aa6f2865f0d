/** Queues of the content watcher service. */
export const CONTENT_WATCHER_QUEUES = {
  /** Search and crawl requests over a block range. */
  request: 'watcherRequestQueue',
  /** DSNP batch files to fetch from IPFS and parse. */
  contentIpfs: 'watcherContentIpfsQueue',
  /** Announcements to deliver to webhooks. */
  delivery: 'watcherDeliveryQueue',
} as const;
