import { commonVariables, workerVariables, type ComponentDefinition } from '@frequency-gateway/platform';
import { contentStoreCheck, openContentStore, storageVariables } from '@frequency-gateway/storage';
import { version } from '../version.js';

export const contentPublishingWorkerConfig = {
  ...commonVariables({ cacheKeyPrefix: 'content-publishing' }),
  ...workerVariables({ port: 3020 }),
  ...storageVariables(),
};

export const contentPublishingWorker: ComponentDefinition<typeof contentPublishingWorkerConfig> = {
  name: 'content-publishing-worker',
  title: 'Content Publishing Service worker',
  description:
    'Builds DSNP content, batches it into Parquet files on IPFS and publishes it on chain with capacity; serves health and metrics',
  version,
  config: contentPublishingWorkerConfig,
  portVariable: 'WORKER_API_PORT',
  setup: ({ config, readiness }) => {
    const store = openContentStore(config);
    readiness.add(contentStoreCheck(store));
    return { stop: async () => store.close?.() };
  },
};
