import { apiVariables, commonVariables, type ComponentDefinition } from '@frequency-gateway/platform';
import { CONTENT_PUBLISHING_QUEUES } from '../queues.js';
import { version } from '../version.js';

export const contentPublishingApiConfig = {
  ...commonVariables({ cacheKeyPrefix: 'content-publishing' }),
  ...apiVariables({ port: 3010 }),
};

export const contentPublishingApi: ComponentDefinition<typeof contentPublishingApiConfig> = {
  name: 'content-publishing-api',
  title: 'Content Publishing Service',
  description: 'Asset upload to IPFS, DSNP announcements, batch announcements and on-chain content',
  version,
  config: contentPublishingApiConfig,
  portVariable: 'API_PORT',
  setup: ({ queues }) => {
    for (const name of Object.values(CONTENT_PUBLISHING_QUEUES)) queues.queue(name);
    return { queueBoard: true };
  },
};
