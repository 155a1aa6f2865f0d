import { apiVariables, commonVariables, type ComponentDefinition } from '@frequency-gateway/platform';
import { contentStoreCheck, openContentStore, storageVariables } from '@frequency-gateway/storage';
import { CONTENT_PUBLISHING_QUEUES } from '../queues.js';
import { version } from '../version.js';

export const contentPublishingApiConfig = {
  ...commonVariables({ cacheKeyPrefix: 'content-publishing' }),
  ...apiVariables({ port: 3010 }),
  ...storageVariables(),
};

export const contentPublishingApi: ComponentDefinition<typeof contentPublishingApiConfig> = {
  name: 'content-publishing-api',
  title: 'Content Publishing Service',
  description: 'Asset upload to IPFS, DSNP announcements, batch announcements and on-chain content',
  version,
  config: contentPublishingApiConfig,
  portVariable: 'API_PORT',
  setup: ({ config, queues, readiness }) => {
    const store = openContentStore(config);
    readiness.add(contentStoreCheck(store));
    for (const name of Object.values(CONTENT_PUBLISHING_QUEUES)) queues.queue(name);
    return { queueBoard: true, stop: async () => store.close?.() };
  },
};
