import { contentPublishingApi } from './api/component.js';
import { contentPublishingWorker } from './worker/component.js';

export { contentPublishingApi, contentPublishingWorker };
export { CONTENT_PUBLISHING_QUEUES } from './queues.js';

/** The components of this service, by the argument that selects them in main.ts. */
export const components = [contentPublishingApi, contentPublishingWorker] as const;
