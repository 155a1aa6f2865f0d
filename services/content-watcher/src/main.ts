import { runComponentFromArgs } from '@frequency-gateway/platform';
import { contentWatcherApi, contentWatcherWorker } from './index.js';

await runComponentFromArgs('content-watcher', { api: contentWatcherApi, worker: contentWatcherWorker });
