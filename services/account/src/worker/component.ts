import {
  CapacityPipeline,
  chainCheck,
  chainTiming,
  openChain,
  signingChainVariables,
  submissionVariables,
  startWhenChainReady,
  type ChainConnection,
  type ChainPipeline,
  type ChainTiming,
  type StartAttempt,
} from '@frequency-gateway/chain';
import {
  bullJobId,
  commonVariables,
  outboundVariables,
  requestStatusVariables,
  variable,
  workerVariables,
  type ComponentDefinition,
  type ComponentRuntime,
  type ConfigOf,
  type Job,
  startIntakeRelay,
} from '@frequency-gateway/platform';
import {
  startTransactionNotifier,
  transactionWebhookVariables,
  type TransactionNotifier,
  webhookVariables,
} from '@frequency-gateway/webhooks';
import { z } from 'zod';
import { transactionJobName, type TransactionJob } from '../jobs.js';
import { transactionNotifyWebhook } from '../notifications.js';
import { ACCOUNT_JOB_OPTIONS, ACCOUNT_QUEUES } from '../queues.js';
import { accountRequests } from '../requests.js';
import { version } from '../version.js';
import { AccountTransactions } from './transactions.js';

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
  timing: ChainTiming,
): Promise<ChainPipeline> {
  const { config, logger, redis, queues, metrics } = runtime;
  const chain = await CapacityPipeline.start(connection, runtime, 'account', timing);
  const status = accountRequests.store(redis, config.CACHE_KEY_PREFIX, config.REQUEST_STATUS_TTL_SECONDS);
  attempt.onFailure(() => status.close());
  const transactions = new AccountTransactions({
    api: connection.api,
    redis,
    prefix: config.CACHE_KEY_PREFIX,
    submitter: chain.submitter,
    tracker: chain.tracker,
    capacity: () => chain.capacity(),
    status,
    notifier,
    providerId: config.PROVIDER_ID.toString(),
    resend: async (job) => {
      const jobId = bullJobId(`${job.referenceId}.resend.${job.resent}`);
      const options = ACCOUNT_JOB_OPTIONS[ACCOUNT_QUEUES.transactionPublish];
      await queues.queue(ACCOUNT_QUEUES.transactionPublish).add(transactionJobName(job.referenceId), job, {
        ...options,
        jobId,
      });
    },
    logger,
    metrics,
  });

  const publisher = queues.worker<TransactionJob, unknown>(
    ACCOUNT_QUEUES.transactionPublish,
    chain.processor((job: Job<TransactionJob>, context) => transactions.run(job, context)),
    {
      ...chain.timing.jobLock,
      concurrency: config.TRANSACTION_CONCURRENCY,
      lastAttemptFailed: (job, error, { run }) =>
        transactions.refuse(job.data, (error as Error).message, transactions.claim(job.data.referenceId, run)),
    },
  );
  attempt.onFailure(() => publisher.close());

  const following = await chain.follow({ pausable: [publisher], settle: (outcome) => transactions.settle(outcome) });
  logger.info({ provider: config.PROVIDER_ID.toString() }, 'transaction pipeline started');
  return {
    stop: async () => {
      await following.stop();
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
    // Refused here, at start, when the durations set break the timing contract.
    const timing = chainTiming(config);
    const chain = openChain({ url: config.FREQUENCY_API_WS_URL, logger: runtime.logger, metrics: runtime.metrics });
    readiness.add(chainCheck(chain));
    const notifier = startTransactionNotifier({ config, queues, logger, metrics, readiness });
    const relay = startIntakeRelay(runtime, accountRequests.intake);

    const pipeline = startWhenChainReady(chain, runtime, 'publisher', (connection, attempt) =>
      startPipeline(connection, attempt, runtime, notifier, timing),
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
