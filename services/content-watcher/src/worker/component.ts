import {
  chainCheck,
  chainVariables,
  ChainQueries,
  openChain,
  SchemaDirectory,
  startWhenChainReady,
  type ChainConnection,
  type ChainPipeline,
} from '@frequency-gateway/chain';
import {
  commonVariables,
  integerInRange,
  outboundPolicy,
  outboundVariables,
  variable,
  workerVariables,
  type ComponentDefinition,
  type ComponentRuntime,
  type ConfigOf,
} from '@frequency-gateway/platform';
import { contentStoreCheck, openContentStore, storageVariables } from '@frequency-gateway/storage';
import { WebhookDelivery, webhookSettings, webhookVariables } from '@frequency-gateway/webhooks';
import { z } from 'zod';
import type { BatchJob, SearchJob } from '../jobs.js';
import { CONTENT_WATCHER_QUEUES } from '../queues.js';
import { WebhookRegistry } from '../registrations.js';
import { ScannerControl } from '../scannerControl.js';
import { version } from '../version.js';
import { BatchReader } from './batches.js';
import { OnChainDecoder } from './onChain.js';
import { ChainScanner } from './scanner.js';
import { SearchCrawler } from './search.js';

export const contentWatcherWorkerConfig = {
  ...commonVariables({ cacheKeyPrefix: 'content-watcher' }),
  ...workerVariables({ port: 3021 }),
  FREQUENCY_API_WS_URL: chainVariables().FREQUENCY_API_WS_URL,
  ...storageVariables(),
  ...webhookVariables(),
  ...outboundVariables(),
  STARTING_BLOCK: variable(
    z.coerce.number().int().min(1).optional(),
    'Block the scanner starts at the first time it runs (later it goes on where it stopped); unset: the finalized head then',
  ),
  SCAN_MAX_BLOCKS: variable(integerInRange(1, 50_000, 1000), 'Most blocks the scanner reads in one step'),
  QUEUE_HIGH_WATER: variable(
    integerInRange(10, 1_000_000, 1000),
    'Batch files waiting to be read beyond which the scanner waits for the readers',
  ),
  BATCH_CONCURRENCY: variable(integerInRange(1, 500, 8), 'Batch files read at the same time'),
  BATCH_READ_TIMEOUT_MS: variable(integerInRange(1000, 600_000, 30_000), 'Longest wait for one batch file from IPFS'),
  BATCH_READ_ATTEMPTS: variable(
    integerInRange(1, 1000, 50),
    'Times a batch file is asked for (with exponential backoff up to 5 minutes) before its job is kept as failed',
  ),
};

type WorkerConfig = ConfigOf<typeof contentWatcherWorkerConfig>;

function startScanning(
  connection: ChainConnection,
  runtime: ComponentRuntime<WorkerConfig>,
  parts: { directory: SchemaDirectory; control: ScannerControl },
): ChainPipeline {
  const { config, queues, logger, metrics } = runtime;
  const queries = new ChainQueries(connection.api);
  const batchQueue = queues.queue<BatchJob>(CONTENT_WATCHER_QUEUES.contentIpfs);
  const scanner = new ChainScanner({
    connection,
    queries,
    directory: parts.directory,
    control: parts.control,
    queue: batchQueue,
    ...(config.STARTING_BLOCK ? { startingBlock: config.STARTING_BLOCK } : {}),
    maxBlocks: config.SCAN_MAX_BLOCKS,
    highWater: config.QUEUE_HIGH_WATER,
    logger,
    metrics,
  });
  const scanning = runtime.lead('content-scanner', ({ signal, progress }) => scanner.scanUntil(signal, progress), {
    reportsProgress: true,
  });
  const subscription = connection.api.rpc.chain.subscribeFinalizedHeads(() => scanner.nudge());

  const crawler = new SearchCrawler({ queries, directory: parts.directory, queue: batchQueue, logger });
  queues.worker<SearchJob, unknown>(CONTENT_WATCHER_QUEUES.request, (job) => crawler.process(job), {
    concurrency: 2,
  });
  return {
    stop: async () => {
      (await subscription)();
      await scanning.stop();
    },
  };
}

export const contentWatcherWorker: ComponentDefinition<typeof contentWatcherWorkerConfig> = {
  name: 'content-watcher-worker',
  title: 'Content Watcher Service worker',
  description:
    'Scans finalized blocks, reads DSNP batch files from IPFS and delivers each announcement to the webhooks registered for it; serves health and metrics',
  version,
  config: contentWatcherWorkerConfig,
  portVariable: 'WORKER_API_PORT',
  setup: (runtime) => {
    const { config, readiness, logger, queues, metrics, redis } = runtime;
    const prefix = config.CACHE_KEY_PREFIX;
    const store = openContentStore(config);
    readiness.add(contentStoreCheck(store));
    const chain = openChain({ url: config.FREQUENCY_API_WS_URL, logger: runtime.logger, metrics: runtime.metrics });
    readiness.add(chainCheck(chain));
    const directory = new SchemaDirectory(chain, { readyTimeoutMs: 30_000, intentTtlMs: 60_000 });
    const control = new ScannerControl(redis, prefix);
    const registry = new WebhookRegistry(redis, prefix);

    const delivery = new WebhookDelivery({
      queues,
      settings: webhookSettings(config),
      logger,
      metrics,
      outbound: outboundPolicy(config),
      queueName: CONTENT_WATCHER_QUEUES.delivery,
    });
    delivery.start();
    const reader = new BatchReader({
      store,
      registry,
      control,
      delivery,
      onChain: new OnChainDecoder(directory),
      readTimeoutMs: config.BATCH_READ_TIMEOUT_MS,
      logger,
      metrics,
    });
    queues.queue<BatchJob>(CONTENT_WATCHER_QUEUES.contentIpfs, {
      attempts: config.BATCH_READ_ATTEMPTS,
      backoff: { type: 'capped' },
      // Kept a day: a message found again within it (a rescan, a replica taking over) is not queued twice.
      removeOnComplete: { age: 24 * 3600 },
      removeOnFail: false,
    });
    queues.worker<BatchJob, unknown>(CONTENT_WATCHER_QUEUES.contentIpfs, (job) => reader.process(job), {
      concurrency: config.BATCH_CONCURRENCY,
      // 1 s, 2 s, 4 s... up to 5 minutes between attempts.
      settings: { backoffStrategy: (attemptsMade: number) => Math.min(1000 * 2 ** (attemptsMade - 1), 300_000) },
    });

    const pipeline = startWhenChainReady(chain, runtime, 'scanner', async (connection) =>
      startScanning(connection, runtime, { directory, control }),
    );
    return {
      stop: async () => {
        await queues.closeWorkers(10_000);
        await pipeline.stop();
        await chain.close();
        await store.close?.();
      },
    };
  },
};
