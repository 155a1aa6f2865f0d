import {
  CapacityMonitor,
  CapacitySubmitter,
  chainCheck,
  loadProviderKey,
  NonceManager,
  openChain,
  signingChainVariables,
  submissionVariables,
  TransactionTracker,
  verifyProvider,
  followTransactions,
  startWhenChainReady,
  type ChainConnection,
  type ChainPipeline,
} from '@frequency-gateway/chain';
import {
  commonVariables,
  outboundVariables,
  DelayedError,
  variable,
  workerVariables,
  type ComponentDefinition,
  type ComponentRuntime,
  type ConfigOf,
  type Job,
  type JobContext,
  startIntakeRelay,
} from '@frequency-gateway/platform';
import { contentStoreCheck, openContentStore, storageVariables, type ContentStore } from '@frequency-gateway/storage';
import { startTransactionNotifier, transactionWebhookVariables, webhookVariables } from '@frequency-gateway/webhooks';
import type { Queue } from 'bullmq';
import { z } from 'zod';
import { SchemaDirectory } from '@frequency-gateway/chain';
import type { ContentRequestJob } from '../jobs.js';
import { CONTENT_PUBLISHING_QUEUES } from '../queues.js';
import { contentRequests, requestStatusVariables } from '../requests.js';
import { version } from '../version.js';
import { Announcing, type CloseBatchJob } from './announcing.js';
import { BatchBook } from './batches.js';
import { ContentBuilder } from './content.js';
import { OutcomeNotifier } from './notifier.js';
import { Outcomes, RETRY_JOB, type RetryJob } from './outcomes.js';
import { Packer } from './packer.js';
import { PublicationBook } from './publications.js';
import {
  CapacityShortError,
  publicationOf,
  Publisher,
  type AnnouncementBatchJob,
  type PublishJobData,
} from './publisher.js';

const count = (min: number, max: number, fallback: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

export const contentPublishingWorkerConfig = {
  ...commonVariables({ cacheKeyPrefix: 'content-publishing' }),
  ...workerVariables({ port: 3020 }),
  ...signingChainVariables(),
  ...storageVariables(),
  ...requestStatusVariables(),
  ...webhookVariables(),
  ...transactionWebhookVariables(),
  ...outboundVariables(),
  BATCH_MAX_COUNT: variable(count(1, 100_000, 1000), 'Announcements after which a batch file is closed at once'),
  BATCH_INTERVAL_SECONDS: variable(
    count(1, 86_400, 12),
    'Longest time a batch stays open after its first announcement before it is written and published',
  ),
  ...submissionVariables(),
  REQUEST_CONCURRENCY: variable(count(1, 500, 32), 'Content requests built and batched at the same time'),
  PUBLISH_CONCURRENCY: variable(count(1, 1000, 50), 'Publish jobs prepared at the same time'),
  PUBLISH_WINDOW_MS: variable(
    count(0, 60_000, 200),
    'How long the publisher waits for more messages to fill a transaction (a full one goes at once)',
  ),
  PUBLISH_MAX_ATTEMPTS: variable(
    count(1, 100, 10),
    'Times a message is sent again after a full block or an expired transaction before its requests fail',
  ),
};

type WorkerConfig = ConfigOf<typeof contentPublishingWorkerConfig>;

interface Shared {
  runtime: ComponentRuntime<WorkerConfig>;
  store: ContentStore;
  directory: SchemaDirectory;
  notifier: OutcomeNotifier;
}

async function startPipeline(connection: ChainConnection, shared: Shared): Promise<ChainPipeline> {
  const { runtime, store, directory, notifier } = shared;
  const { config, logger, redis, queues, metrics } = runtime;
  const prefix = config.CACHE_KEY_PREFIX;
  const { api } = connection;
  const key = await loadProviderKey(config.PROVIDER_ACCOUNT_SEED_PHRASE);
  await verifyProvider(api, key, config.PROVIDER_ID);

  const status = contentRequests.store(redis, prefix, config.REQUEST_STATUS_TTL_SECONDS);
  const publishQueue = queues.queue<PublishJobData>(CONTENT_PUBLISHING_QUEUES.publish);
  const batchQueue = queues.queue<CloseBatchJob>(CONTENT_PUBLISHING_QUEUES.batch);
  const batches = new BatchBook(redis, prefix, { maxRows: config.BATCH_MAX_COUNT });
  const publications = new PublicationBook(redis, prefix);
  const submitter = new CapacitySubmitter(api, key, new NonceManager(redis, api, key.address, { prefix }));

  // The monitor pauses the publish worker, whose jobs ask the monitor to check: the worker comes later.
  const publishing: { worker?: { pause(): Promise<void>; resume(): void } } = {};
  const capacity = new CapacityMonitor({
    api,
    redis,
    providerId: config.PROVIDER_ID,
    limits: config.CAPACITY_LIMIT,
    prefix,
    service: 'content-publishing',
    pausable: [{ pause: async () => publishing.worker?.pause(), resume: async () => publishing.worker?.resume() }],
    metrics,
  });
  const outcomes = new Outcomes({
    book: publications,
    status,
    notifier,
    publishQueue: publishQueue as Queue,
    capacity,
    maxAttempts: config.PUBLISH_MAX_ATTEMPTS,
    retryDelayMs: connection.blockTimeMs,
    forgetMemberships: (referenceIds) => batches.forget(referenceIds),
    logger,
    metrics,
  });
  const tracker = new TransactionTracker(api, redis, {
    prefix,
    trustUnfinalized: config.TRUST_UNFINALIZED_BLOCKS,
    onOutcome: (outcome) => outcomes.settle(outcome),
  });
  const packer = new Packer(submitter, tracker, { windowMs: config.PUBLISH_WINDOW_MS, logger, metrics });
  const publisher = new Publisher({
    api,
    book: publications,
    packer,
    store,
    directory,
    status,
    outcomes,
    providerId: config.PROVIDER_ID,
    maxBatch: submitter.maxBatch,
  });
  const announcing = new Announcing({
    builder: new ContentBuilder(config.IPFS_GATEWAY_URL),
    book: batches,
    directory,
    store,
    status,
    batchQueue,
    publishQueue: publishQueue as unknown as Queue<AnnouncementBatchJob>,
    intervalMs: config.BATCH_INTERVAL_SECONDS * 1000,
    metrics,
  });

  const isLastAttempt = (job: Job) => job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
  queues.worker<ContentRequestJob, unknown>(
    CONTENT_PUBLISHING_QUEUES.request,
    async (job, context) => {
      try {
        return await announcing.processRequest(job, context);
      } catch (error) {
        if (isLastAttempt(job)) {
          const { referenceId } = job.data;
          const publication = { id: referenceId, transactionType: 'CAPACITY_BATCH' as const, messages: [] };
          await outcomes.fail({ ...publication, referenceIds: [referenceId] }, { message: (error as Error).message });
        }
        throw error;
      }
    },
    { concurrency: config.REQUEST_CONCURRENCY },
  );
  queues.worker<CloseBatchJob, unknown>(
    CONTENT_PUBLISHING_QUEUES.batch,
    (job, context) => announcing.processClose(job, context),
    { concurrency: 4 },
  );
  const publishProcessor = async (job: Job<PublishJobData>, context: JobContext) => {
    try {
      return await publisher.process(job, context);
    } catch (error) {
      if (error instanceof CapacityShortError) {
        // Not a failure of the job: wait for Capacity (the monitor pauses this worker until it is back).
        await capacity.check().catch(() => undefined);
        await job.moveToDelayed(Date.now() + connection.blockTimeMs, context.token);
        throw new DelayedError();
      }
      if (isLastAttempt(job)) {
        // A retry job names its publication; the others state it.
        const publication =
          job.name === RETRY_JOB
            ? (await publications.get((job.data as RetryJob).publicationId))?.publication
            : publicationOf(job.name, job.data);
        if (publication) await outcomes.fail(publication, { message: (error as Error).message });
      }
      throw error;
    }
  };
  publishing.worker = queues.worker<PublishJobData, unknown>(CONTENT_PUBLISHING_QUEUES.publish, publishProcessor, {
    concurrency: config.PUBLISH_CONCURRENCY,
  });

  const unfollow = await followTransactions({ connection, tracker, capacity, runtime, logger });
  const rearmed = await announcing.rearm();
  logger.info({ provider: config.PROVIDER_ID.toString(), openBatches: rearmed }, 'publishing pipeline started');

  return {
    stop: async () => {
      packer.close();
      await unfollow();
      status.close();
    },
  };
}

export const contentPublishingWorker: ComponentDefinition<typeof contentPublishingWorkerConfig> = {
  name: 'content-publishing-worker',
  title: 'Content Publishing Service worker',
  description:
    'Builds DSNP content, batches it into Parquet files on IPFS and publishes it on chain with capacity; serves health and metrics',
  version,
  config: contentPublishingWorkerConfig,
  portVariable: 'WORKER_API_PORT',
  setup: (runtime) => {
    const { config, readiness, logger, queues, metrics } = runtime;
    const store = openContentStore(config);
    readiness.add(contentStoreCheck(store));
    const chain = openChain({ url: config.FREQUENCY_API_WS_URL, logger: runtime.logger });
    readiness.add(chainCheck(chain));
    const directory = new SchemaDirectory(chain, { readyTimeoutMs: 30_000, intentTtlMs: 60_000 });
    const relay = startIntakeRelay(runtime, contentRequests.intake);
    const notifier = new OutcomeNotifier(
      startTransactionNotifier({ config, queues, logger, metrics, readiness }),
      config.PROVIDER_ID.toString(),
    );

    const pipeline = startWhenChainReady(chain, runtime, 'publisher', (connection) =>
      startPipeline(connection, { runtime, store, directory, notifier }),
    );

    return {
      stop: async () => {
        // Jobs finish with the chain still there; a pipeline still waiting for the node never starts.
        await relay.stop();
        await queues.closeWorkers(10_000);
        await pipeline.stop();
        await chain.close();
        await store.close?.();
      },
    };
  },
};
