import { chainCheck, chainUnreachable, chainVariables, openChain } from '@frequency-gateway/chain';
import {
  apiVariables,
  Intake,
  intakeStream,
  intakeDurability,
  intakeVariables,
  openRedis,
  commonVariables,
  requestStatusRoutes,
  variable,
  type ComponentDefinition,
} from '@frequency-gateway/platform';
import { contentStoreCheck, openContentStore, storageVariables } from '@frequency-gateway/storage';
import { DEFAULT_WEBHOOK_QUEUE } from '@frequency-gateway/webhooks';
import { z } from 'zod';
import { DelegationGate, SchemaDirectory } from '@frequency-gateway/chain';
import { CONTENT_PUBLISHING_JOB_OPTIONS, jobOptionsOf } from '../queues.js';
import { contentRequests, requestStatusVariables } from '../requests.js';
import { version } from '../version.js';
import { AssetCatalog } from './assets.js';
import { assetRoutes } from './assetRoutes.js';
import { batchRoutes } from './batchRoutes.js';
import { contentRoutes } from './contentRoutes.js';
import { devRoutes } from './devRoutes.js';
import { onChainRoutes } from './onChainRoutes.js';
import { Uploads } from './uploads.js';

export const contentPublishingApiConfig = {
  ...commonVariables({ cacheKeyPrefix: 'content-publishing' }),
  ...apiVariables({ port: 3010 }),
  ...intakeVariables(),
  ...chainVariables(),
  ...storageVariables(),
  FILE_UPLOAD_MAX_SIZE_IN_BYTES: variable(
    z.coerce.number().int().positive().default(2_000_000_000),
    'Largest file an upload may carry, in bytes; a larger one is refused (413) as soon as it crosses the limit and nothing of its request is kept',
  ),
  FILE_UPLOAD_COUNT_LIMIT: variable(
    z.coerce.number().int().positive().default(10),
    'Most files one upload request may carry (400 at the next one)',
  ),
  FILE_UPLOAD_FIELD_COUNT_LIMIT: variable(
    z.coerce.number().int().positive().optional(),
    'Most text fields one upload request may carry (400 at the next one); by default twice FILE_UPLOAD_COUNT_LIMIT (a v3 batch upload sends one schemaId per file)',
  ),
  FILE_UPLOAD_FIELD_MAX_SIZE_IN_BYTES: variable(
    z.coerce.number().int().positive().default(1024),
    'Longest text field of an upload request, in bytes (400 past it)',
  ),
  ...requestStatusVariables(),
};

/** How long a route waits for a chain that is still connecting before answering 503. */
const CHAIN_WAIT_MS = 5_000;
/** How long a user's delegation of an intent, once seen, is taken as granted (a revocation counts within it). */
const DELEGATION_TTL_MS = 60_000;

export const contentPublishingApi: ComponentDefinition<typeof contentPublishingApiConfig> = {
  name: 'content-publishing-api',
  title: 'Content Publishing Service',
  description:
    'Asset upload to IPFS, DSNP announcements, batch announcements and on-chain content. Publishing is asynchronous: every accepted request has a referenceId whose progress GET /v1/requests/{referenceId} shows.',
  version,
  config: contentPublishingApiConfig,
  portVariable: 'API_PORT',
  setup: ({ config, queues, readiness, metrics, logger, shutdown, redisEndpoint }) => {
    const store = openContentStore(config);
    readiness.add(contentStoreCheck(store));
    const chain = openChain({ url: config.FREQUENCY_API_WS_URL, logger, metrics });
    readiness.add(chainCheck(chain));
    // The board shows the worker's queues too: its webhook deliveries (and their dead letters) among them.
    for (const [name, options] of Object.entries(CONTENT_PUBLISHING_JOB_OPTIONS)) queues.queue(name, options);
    queues.queue(DEFAULT_WEBHOOK_QUEUE);

    // Requests are answered at once while Redis is away (503), not held until it returns.
    const redis = openRedis(redisEndpoint, 'failFast');
    const status = contentRequests.store(redis, config.CACHE_KEY_PREFIX, config.REQUEST_STATUS_TTL_SECONDS);
    const stream = intakeStream(config.CACHE_KEY_PREFIX, contentRequests.intake);
    const intake = new Intake(status, logger, metrics, {
      service: contentRequests.intake,
      stream,
      jobOptions: jobOptionsOf,
      ...intakeDurability(config),
    });
    const directory = new SchemaDirectory(chain, { readyTimeoutMs: CHAIN_WAIT_MS, intentTtlMs: 60_000 });
    const gate = new DelegationGate(directory, config.PROVIDER_ID, { ttlMs: DELEGATION_TTL_MS });
    const catalog = new AssetCatalog(redis, config.CACHE_KEY_PREFIX);
    const uploads = new Uploads(store, catalog, {
      maxFileBytes: config.FILE_UPLOAD_MAX_SIZE_IN_BYTES,
      maxFiles: config.FILE_UPLOAD_COUNT_LIMIT,
      maxFields: config.FILE_UPLOAD_FIELD_COUNT_LIMIT ?? 2 * config.FILE_UPLOAD_COUNT_LIMIT,
      maxFieldBytes: config.FILE_UPLOAD_FIELD_MAX_SIZE_IN_BYTES,
    });

    const routes = [
      ...assetRoutes(uploads),
      ...contentRoutes(intake, catalog, gate),
      ...batchRoutes(intake, directory, uploads),
      ...onChainRoutes(intake, directory, gate),
      ...requestStatusRoutes({ store: status, recordSchema: contentRequests.recordSchema, signal: shutdown.signal }),
      ...(config.ENVIRONMENT === 'dev' ? devRoutes({ intake, queues, redis, stream }) : []),
    ];
    return {
      routes,
      queueBoard: true,
      // A route that needed the chain while it was away answers 503 saying so.
      dependencyFailure: chainUnreachable,
      stop: async () => {
        status.close();
        await Promise.all([chain.close(), store.close?.()]);
        redis.disconnect();
      },
    };
  },
};
