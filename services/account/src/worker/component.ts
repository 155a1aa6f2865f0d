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
  type StartAttempt,
} from '@frequency-gateway/chain';
import {
  commonVariables,
  outboundVariables,
  DelayedError,
  requestStatusVariables,
  variable,
  workerVariables,
  type ComponentDefinition,
  type ComponentRuntime,
  type ConfigOf,
  type Job,
  type JobContext,
  startIntakeRelay,
} from '@frequency-gateway/platform';
import {
  startTransactionNotifier,
  transactionWebhookVariables,
  type TransactionNotifier,
  webhookVariables,
} from '@frequency-gateway/webhooks';
import { z } from 'zod';
import type { TransactionJob } from '../jobs.js';
import { transactionNotifyWebhook } from '../notifications.js';
import { ACCOUNT_QUEUES } from '../queues.js';
import { INTAKE_SERVICE, requestStatusStore } from '../requests.js';
import { version } from '../version.js';
import { AccountTransactions, CapacityShortError, RefusedError } from './transactions.js';

export const accountWorkerConfig = {
  ...commonVariables({ cacheKeyPrefix: 'account' }),
  ...workerVariables({ port: 3023 }),
  ...signingChainVariables(),
  ...submissionVariables(),
  ...requestStatusVariables(),
  ...webhookVariables(),
  ...transactionWebhookVariables(),
  ...outboundVariables(),
  TRANSACTION_CONCURRENCY: variable(
    z.coerce.number().int().min(1).max(500).default(20),
    'Transaction jobs signed and submitted at the same time',
  ),
};

type WorkerConfig = ConfigOf<typeof accountWorkerConfig>;

/**
 * The chain-side half of the worker, built once the node answers and the provider key checks out. An attempt
 * that fails after the checks undoes what it started (`attempt.onFailure`), so the next one starts clean.
 */
async function startPipeline(
  connection: ChainConnection,
  attempt: StartAttempt,
  runtime: ComponentRuntime<WorkerConfig>,
  notifier: TransactionNotifier,
): Promise<ChainPipeline> {
  const { config, logger, redis, queues, metrics } = runtime;
  const prefix = config.CACHE_KEY_PREFIX;
  const { api } = connection;
  const key = await loadProviderKey(config.PROVIDER_ACCOUNT_SEED_PHRASE);
  await verifyProvider(api, key, config.PROVIDER_ID);

  const status = requestStatusStore(redis, prefix, config.REQUEST_STATUS_TTL_SECONDS);
  attempt.onFailure(() => status.close());
  const publishing: { worker?: { pause(): Promise<void>; resume(): void } } = {};
  const capacity = new CapacityMonitor({
    api,
    redis,
    providerId: config.PROVIDER_ID,
    limits: config.CAPACITY_LIMIT,
    prefix,
    service: 'account',
    pausable: [{ pause: async () => publishing.worker?.pause(), resume: async () => publishing.worker?.resume() }],
    metrics,
  });
  const holder: { transactions?: AccountTransactions } = {};
  const tracker = new TransactionTracker(api, redis, {
    prefix,
    trustUnfinalized: config.TRUST_UNFINALIZED_BLOCKS,
    onOutcome: (outcome) => (holder.transactions as AccountTransactions).settle(outcome),
  });
  const transactions = new AccountTransactions({
    api,
    redis,
    prefix,
    submitter: new CapacitySubmitter(api, key, new NonceManager(redis, api, key.address, { prefix })),
    tracker,
    capacity,
    status,
    notifier,
    providerId: config.PROVIDER_ID.toString(),
    logger,
    metrics,
  });
  holder.transactions = transactions;

  const isLastAttempt = (job: Job) => job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
  const publisher = queues.worker<TransactionJob, unknown>(
    ACCOUNT_QUEUES.transactionPublish,
    async (job: Job<TransactionJob>, context: JobContext) => {
      try {
        return await transactions.process(job);
      } catch (error) {
        if (error instanceof CapacityShortError) {
          // Not a failure of the job: wait for Capacity (the monitor pauses this worker until it is back).
          await capacity.check().catch(() => undefined);
          await job.moveToDelayed(Date.now() + connection.blockTimeMs, context.token);
          throw new DelayedError();
        }
        if (error instanceof RefusedError || isLastAttempt(job)) {
          await transactions.refuse(job.data, (error as Error).message);
          if (error instanceof RefusedError) return { refused: error.reason };
        }
        throw error;
      }
    },
    { concurrency: config.TRANSACTION_CONCURRENCY },
  );
  publishing.worker = publisher;
  attempt.onFailure(() => publisher.close());

  const unfollow = await followTransactions({ connection, tracker, capacity, runtime, logger });
  logger.info({ provider: config.PROVIDER_ID.toString() }, 'transaction pipeline started');
  return {
    stop: async () => {
      await unfollow();
      status.close();
    },
  };
}

export const accountWorker: ComponentDefinition<typeof accountWorkerConfig> = {
  name: 'account-worker',
  title: 'Account Service worker',
  description:
    'Signs and submits account transactions with capacity, follows them to finality and notifies their outcomes; serves health and metrics',
  version,
  config: accountWorkerConfig,
  portVariable: 'WORKER_API_PORT',
  setup: (runtime) => {
    const { config, readiness, logger, queues, metrics } = runtime;
    const chain = openChain({ url: config.FREQUENCY_API_WS_URL, logger: runtime.logger });
    readiness.add(chainCheck(chain));
    const notifier = startTransactionNotifier({ config, queues, logger, metrics, readiness });
    const relay = startIntakeRelay(runtime, INTAKE_SERVICE);

    const pipeline = startWhenChainReady(chain, runtime, 'publisher', (connection, attempt) =>
      startPipeline(connection, attempt, runtime, notifier),
    );

    return {
      webhooks: [transactionNotifyWebhook],
      stop: async () => {
        await relay.stop();
        await queues.closeWorkers(10_000);
        await pipeline.stop();
        await chain.close();
      },
    };
  },
};
