import { commonVariables, workerVariables, type ComponentDefinition } from '@frequency-gateway/platform';
import { version } from '../version.js';

export const contentWatcherWorkerConfig = {
  ...commonVariables({ cacheKeyPrefix: 'content-watcher' }),
  ...workerVariables({ port: 3021 }),
};

export const contentWatcherWorker: ComponentDefinition<typeof contentWatcherWorkerConfig> = {
  name: 'content-watcher-worker',
  title: 'Content Watcher Service worker',
  description:
    'Scans the chain, reads DSNP batch files from IPFS and delivers announcements to registered webhooks; serves health and metrics',
  version,
  config: contentWatcherWorkerConfig,
  portVariable: 'WORKER_API_PORT',
  setup: () => ({}),
};
