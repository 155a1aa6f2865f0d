import { contentWatcherApi } from './api/component.js';
import { contentWatcherWorker } from './worker/component.js';

export { contentWatcherApi, contentWatcherWorker };
export { CONTENT_WATCHER_QUEUES } from './queues.js';

/** The components of this service, by the argument that selects them in main.ts. */
export const components = [contentWatcherApi, contentWatcherWorker] as const;
