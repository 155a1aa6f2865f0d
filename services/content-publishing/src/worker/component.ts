import {
  CapacityPipeline,
  chainCheck,
  chainTiming,
  ChainQueries,
  openChain,
  SchemaDirectory,
  signingChainVariables,
  startWhenChainReady,
  submissionVariables,
  type ChainConnection,
  type ChainPipeline,
  type ChainTiming,
  type StartAttempt,
} from '@frequency-gateway/chain';
import {
  commonVariables,
  integerInRange,
  outboundVariables,
  variable,
  workerVariables,
  type ComponentDefinition,
  type ComponentRuntime,
  type ConfigOf,
} from '@frequency-gateway/platform';
import { contentStoreCheck, openContentStore, storageVariables, type ContentStore } from '@frequency-gateway/storage';
import { startTransactionNotifier, transactionWebhookVariables, webhookVariables } from '@frequency-gateway/webhooks';
import { CONTENT_PUBLISHING_JOB_OPTIONS, CONTENT_PUBLISHING_QUEUES } from '../queues.js';
import { contentRequests, requestStatusVariables } from '../requests.js';
import { version } from '../version.js';
import { BatchBook } from './batch/book.js';
import type { CloseBatchJob } from '../jobs/batch.js';
import { OpenBatches } from './batch/openBatches.js';
import { BatchWriter } from './batch/writer.js';
import { Announcer } from './document/announcer.js';
import { ContentBuilder } from './document/builder.js';
import type { ContentRequestJob } from '../jobs/document.js';
import { startIntake } from './intake/relay.js';
import { publishingMetrics, type PublishingMetrics } from './metrics.js';
import { OutcomeNotifier } from './notify/notifier.js';
import type { PublishJobName, PublishJobs } from '../jobs/publish.js';
import { Packer } from './publish/packer.js';
import { PublicationBook } from './publish/publications.js';
import { Publisher } from './publish/publisher.js';
import { RequestRecords } from './requestRecords.js';
import { batchMembershipSeconds, publicationSeconds } from './retention.js';
import { PublicationSettler } from './track/settler.js';

export const contentPublishingWorkerConfig = {
  ...commonVariables({ cacheKeyPrefix: 'content-publishing' }),
  ...workerVariables({ port: 3020 }),
  ...signingChainVariables(),
  ...storageVariables(),
  ...requestStatusVariables(),
  ...webhookVariables(),
  ...transactionWebhookVariables(),
  ...outboundVariables(),
  BATCH_MAX_COUNT: variable(
    integerInRange(1, 100_000, 1000),
    'Announcements after which a batch file is closed at once',
  ),
  BATCH_INTERVAL_SECONDS: variable(
    integerInRange(1, 86_400, 12),
    'Longest time a batch stays open after its first announcement before it is written and published',
  ),
  ...submissionVariables(),
  REQUEST_CONCURRENCY: variable(integerInRange(1, 500, 32), 'Content requests built and batched at the same time'),
  PUBLISH_CONCURRENCY: variable(integerInRange(1, 1000, 50), 'Publish jobs prepared at the same time'),
  PUBLISH_WINDOW_MS: variable(
    integerInRange(0, 60_000, 200),
    'How long the publisher waits for more messages to fill a transaction (a full one goes at once)',
  ),
  PUBLISH_MAX_ATTEMPTS: variable(
    integerInRange(1, 100, 10),
    'Times a message is sent again after a full block or an expired transaction before its requests fail',
  ),
};

type WorkerConfig = ConfigOf<typeof contentPublishingWorkerConfig>;

/** What outlives an attempt to start the pipeline: built once per process in `setup`. */
interface Shared {
  runtime: ComponentRuntime<WorkerConfig>;
  store: ContentStore;
  directory: SchemaDirectory;
  notifier: OutcomeNotifier;
  metrics: PublishingMetrics;
  timing: ChainTiming;
}

const { request: REQUEST_QUEUE, batch: BATCH_QUEUE, publish: PUBLISH_QUEUE } = CONTENT_PUBLISHING_QUEUES;

/**
 * The chain-side pipeline, stage by stage (see docs/architecture.md, the life of a broadcast): built once the node
 * answers and the key checks out. An attempt that fails undoes what it started (`attempt.onFailure`) and the
 * metrics are the process's, so the next attempt starts clean.
 */
async function startPipeline(
  connection: ChainConnection,
  attempt: StartAttempt,
  shared: Shared,
): Promise<ChainPipeline> {
  const { runtime, store, directory, notifier, metrics, timing } = shared;
  const { config, logger, redis, queues } = runtime;
  const prefix = config.CACHE_KEY_PREFIX;
  const chain = await CapacityPipeline.start(connection, runtime, 'content-publishing', timing);

  const status = contentRequests.store(redis, prefix, config.REQUEST_STATUS_TTL_SECONDS);
  attempt.onFailure(() => status.close());
  const records = new RequestRecords(status, { listener: notifier, finished: metrics.finished });
  const batchQueue = queues.queue<CloseBatchJob>(BATCH_QUEUE);
  const publishQueue = queues.queue<PublishJobs[PublishJobName]>(PUBLISH_QUEUE);
  const batchBook = new BatchBook(redis, prefix, {
    maxRows: config.BATCH_MAX_COUNT,
    membershipSeconds: batchMembershipSeconds(config.REQUEST_STATUS_TTL_SECONDS),
  });
  const publications = new PublicationBook(redis, prefix, publicationSeconds(config.REQUEST_STATUS_TTL_SECONDS));

  // document → batch → publish → track (notify: the records' listener)
  const batches = new OpenBatches({
    book: batchBook,
    closer: batchQueue,
    intervalMs: config.BATCH_INTERVAL_SECONDS * 1000,
    batched: metrics.batched,
  });
  const announcer = new Announcer({
    builder: new ContentBuilder(config.IPFS_GATEWAY_URL),
    directory,
    store,
    batches,
    records,
    logger,
  });
  const writer = new BatchWriter({
    book: batchBook,
    directory,
    store,
    records,
    publisher: publishQueue,
    batchRows: metrics.batchRows,
    logger,
  });
  const packer = new Packer(chain.submitter, {
    windowMs: config.PUBLISH_WINDOW_MS,
    submissions: publications.submissions(chain.tracker),
    redis,
    logger,
    transactions: metrics.transactions,
    callsPerTransaction: metrics.callsPerTransaction,
  });
  attempt.onFailure(() => packer.close());
  const publisher = new Publisher({
    api: connection.api,
    queries: new ChainQueries(connection.api),
    book: publications,
    packer,
    redis,
    store,
    directory,
    records,
    providerId: config.PROVIDER_ID,
    maxBatch: chain.submitter.maxBatch,
  });
  const settler = new PublicationSettler({
    book: publications,
    records,
    publisher: publishQueue,
    maxAttempts: config.PUBLISH_MAX_ATTEMPTS,
    retryDelayMs: connection.blockTimeMs,
    logger,
  });

  const documenting = queues.worker<ContentRequestJob, unknown>(
    REQUEST_QUEUE,
    (job, context) => announcer.process(job, context),
    { concurrency: config.REQUEST_CONCURRENCY, lastAttemptFailed: (job, error) => announcer.failed(job, error) },
  );
  const batching = queues.worker<CloseBatchJob, unknown>(BATCH_QUEUE, (job, context) => writer.process(job, context), {
    concurrency: 4,
    lastAttemptFailed: (job, error) => writer.failed(job, error),
  });
  const publishing = queues.worker<PublishJobs[PublishJobName], unknown>(
    PUBLISH_QUEUE,
    chain.processor((job, context) => publisher.process(job, context)),
    {
      ...chain.timing.jobLock,
      concurrency: config.PUBLISH_CONCURRENCY,
      lastAttemptFailed: (job, error, context) => publisher.failed(job, error, context),
    },
  );
  for (const worker of [documenting, batching, publishing]) attempt.onFailure(() => worker.close());

  const rearmed = await batches.rearm();
  const following = await chain.follow({ pausable: [publishing], settle: (outcome) => settler.settle(outcome) });
  logger.info({ provider: config.PROVIDER_ID.toString(), openBatches: rearmed }, 'publishing pipeline started');
  return {
    stop: async () => {
      packer.close();
      await following.stop();
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
    // Refused here, at start, when the durations set break the timing contract.
    const timing = chainTiming(config);
    const store = openContentStore(config);
    readiness.add(contentStoreCheck(store));
    const chain = openChain({ url: config.FREQUENCY_API_WS_URL, logger: runtime.logger, metrics: runtime.metrics });
    readiness.add(chainCheck(chain));
    const directory = new SchemaDirectory(chain, { readyTimeoutMs: 30_000, intentTtlMs: 60_000 });
    // Each queue with its job options (src/queues.ts) before anything adds to it, the intake's relay first.
    for (const [name, options] of Object.entries(CONTENT_PUBLISHING_JOB_OPTIONS)) queues.queue(name, options);
    const relay = startIntake(runtime);
    const notifier = new OutcomeNotifier(
      startTransactionNotifier({ config, queues, logger, metrics, readiness }),
      config.PROVIDER_ID.toString(),
    );
    const shared = { runtime, store, directory, notifier, metrics: publishingMetrics(metrics), timing };

    const pipeline = startWhenChainReady(chain, runtime, 'publisher', (connection, attempt) =>
      startPipeline(connection, attempt, shared),
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
