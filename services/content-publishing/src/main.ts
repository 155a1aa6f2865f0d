import { runComponentFromArgs } from '@frequency-gateway/platform';
import { contentPublishingApi, contentPublishingWorker } from './index.js';

await runComponentFromArgs('content-publishing', { api: contentPublishingApi, worker: contentPublishingWorker });
