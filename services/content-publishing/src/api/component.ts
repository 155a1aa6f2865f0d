import { apiVariables, commonVariables, variable, type ComponentDefinition } from '@frequency-gateway/platform';
import { z } from 'zod';
import { AssetCatalog, uploadMiddleware } from './assets.js';
import { assetRoutes } from './assetRoutes.js';
import { contentStoreCheck, openContentStore, storageVariables } from '@frequency-gateway/storage';
import { CONTENT_PUBLISHING_QUEUES } from '../queues.js';
import { version } from '../version.js';

export const contentPublishingApiConfig = {
  ...commonVariables({ cacheKeyPrefix: 'content-publishing' }),
  ...apiVariables({ port: 3010 }),
  ...storageVariables(),
  FILE_UPLOAD_MAX_SIZE_IN_BYTES: variable(
    z.coerce.number().int().positive().default(2_000_000_000),
    'Largest file an upload may carry, in bytes; a larger one is refused and nothing of it is kept',
  ),
  FILE_UPLOAD_COUNT_LIMIT: variable(
    z.coerce.number().int().positive().default(10),
    'Most files one upload request may carry',
  ),
};

export const contentPublishingApi: ComponentDefinition<typeof contentPublishingApiConfig> = {
  name: 'content-publishing-api',
  title: 'Content Publishing Service',
  description: 'Asset upload to IPFS, DSNP announcements, batch announcements and on-chain content',
  version,
  config: contentPublishingApiConfig,
  portVariable: 'API_PORT',
  setup: ({ config, queues, readiness, redis }) => {
    const store = openContentStore(config);
    readiness.add(contentStoreCheck(store));
    for (const name of Object.values(CONTENT_PUBLISHING_QUEUES)) queues.queue(name);
    const catalog = new AssetCatalog(redis, config.CACHE_KEY_PREFIX);
    const upload = uploadMiddleware(store, catalog, {
      maxFileBytes: config.FILE_UPLOAD_MAX_SIZE_IN_BYTES,
      maxFiles: config.FILE_UPLOAD_COUNT_LIMIT,
    });
    return { routes: assetRoutes(upload), queueBoard: true, stop: async () => store.close?.() };
  },
};
