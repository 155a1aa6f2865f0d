import { commonVariables, workerVariables, type ComponentDefinition } from '@frequency-gateway/platform';
import { version } from '../version.js';

export const contentPublishingWorkerConfig = {
  ...commonVariables({ cacheKeyPrefix: 'content-publishing' }),
  ...workerVariables({ port: 3020 }),
};

export const contentPublishingWorker: ComponentDefinition<typeof contentPublishingWorkerConfig> = {
  name: 'content-publishing-worker',
  title: 'Content Publishing Service worker',
  description:
    'Builds DSNP content, batches it into Parquet files on IPFS and publishes it on chain with capacity; serves health and metrics',
  version,
  config: contentPublishingWorkerConfig,
  portVariable: 'WORKER_API_PORT',
  setup: () => ({}),
};
