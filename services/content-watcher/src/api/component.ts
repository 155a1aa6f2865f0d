import { apiVariables, commonVariables, type ComponentDefinition } from '@frequency-gateway/platform';
import { CONTENT_WATCHER_QUEUES } from '../queues.js';
import { version } from '../version.js';

export const contentWatcherApiConfig = {
  ...commonVariables({ cacheKeyPrefix: 'content-watcher' }),
  ...apiVariables({ port: 3011 }),
};

export const contentWatcherApi: ComponentDefinition<typeof contentWatcherApiConfig> = {
  name: 'content-watcher-api',
  title: 'Content Watcher Service',
  description: 'Webhook registration, chain scanning control and content search',
  version,
  config: contentWatcherApiConfig,
  portVariable: 'API_PORT',
  setup: ({ queues }) => {
    for (const name of Object.values(CONTENT_WATCHER_QUEUES)) queues.queue(name);
    return { queueBoard: true };
  },
};
