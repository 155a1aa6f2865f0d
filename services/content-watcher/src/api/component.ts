import {
  apiVariables,
  commonVariables,
  outboundPolicy,
  outboundVariables,
  type ComponentDefinition,
} from '@frequency-gateway/platform';
import { announcementWebhook } from '../announcements.js';
import { CONTENT_WATCHER_QUEUES } from '../queues.js';
import { WebhookRegistry } from '../registrations.js';
import { ScannerControl } from '../scannerControl.js';
import { version } from '../version.js';
import { scannerRoutes, searchRoutes, webhookRoutes } from './routes.js';

export const contentWatcherApiConfig = {
  ...commonVariables({ cacheKeyPrefix: 'content-watcher' }),
  ...apiVariables({ port: 3011 }),
  // Registration refuses URLs whose destination the worker would refuse to deliver to.
  ...outboundVariables(),
};

export const contentWatcherApi: ComponentDefinition<typeof contentWatcherApiConfig> = {
  name: 'content-watcher-api',
  title: 'Content Watcher Service',
  description:
    'Webhook registration, scanner control and content search. The worker scans finalized blocks for DSNP announcements and POSTs each one, once, to every URL registered for its type (see webhooks).',
  version,
  config: contentWatcherApiConfig,
  portVariable: 'API_PORT',
  setup: ({ config, queues, redis }) => {
    for (const name of Object.values(CONTENT_WATCHER_QUEUES)) queues.queue(name);
    const prefix = config.CACHE_KEY_PREFIX;
    const outbound = outboundPolicy(config);
    return {
      routes: [
        ...webhookRoutes(new WebhookRegistry(redis, prefix), outbound),
        ...scannerRoutes(new ScannerControl(redis, prefix)),
        ...searchRoutes(queues, outbound),
      ],
      webhooks: [announcementWebhook],
      queueBoard: true,
    };
  },
};
