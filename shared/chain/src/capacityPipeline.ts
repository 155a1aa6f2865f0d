import {
  DelayedError,
  type ComponentRuntime,
  type Job,
  type JobContext,
  type JobProcessor,
} from '@frequency-gateway/platform';
import { Counter, type Registry } from 'prom-client';
import { CapacityMonitor, type CapacityLimits, type CapacityState, type Pausable } from './capacity.js';
import type { ChainConnection } from './connection.js';
import { NonceManager, SIGNING_KEYSPACE } from './nonces.js';
import type { ChainPipeline } from './pipelineStart.js';
import { followTransactions } from './transactionFollowing.js';
import { loadProviderKey, verifyProvider, type ProviderKey } from './provider.js';
import { CapacitySubmitter } from './submitter.js';
import type { ChainTiming } from './timing.js';
import { TransactionTracker, type TransactionOutcome } from './tracker/index.js';
import { isChainUnreachable } from './unreachable.js';

/** Capacity is short (none left, or the service's limit reached; the node refused for fees): the job waits. */
export class CapacityShortError extends Error {
  constructor(reason: string, options?: ErrorOptions) {
    super(`Capacity is short: ${reason}`, options);
    this.name = 'CapacityShortError';
  }
}

/** One counter per registry (a pipeline built again, when a start is retried, reuses it). */
function gapsFilled(registry: Registry): Counter {
  const name = 'chain_nonce_gaps_filled_total';
  return (
    (registry.getSingleMetric(name) as Counter | undefined) ??
    new Counter({
      name,
      help: "Nonces reserved and never submitted that held back the provider's transactions, filled with an empty batch",
      registers: [registry],
    })
  );
}

/** What a capacity pipeline reads of its worker's configuration (signingChainVariables, submissionVariables). */
export interface CapacityPipelineConfig {
  CACHE_KEY_PREFIX: string;
  PROVIDER_ID: bigint;
  PROVIDER_ACCOUNT_SEED_PHRASE: string;
  CAPACITY_LIMIT: CapacityLimits;
  TRUST_UNFINALIZED_BLOCKS: boolean;
}

type PipelineRuntime = Pick<
  ComponentRuntime<CapacityPipelineConfig>,
  'config' | 'redis' | 'logger' | 'metrics' | 'readiness' | 'lead'
> &
  Partial<Pick<ComponentRuntime<CapacityPipelineConfig>, 'queues'>>;

export interface FollowingOptions {
  /** Paused while Capacity is short, resumed when it is back: the worker whose jobs spend it. */
  pausable: Pausable[];
  /** The service's settlement of each transaction outcome, called after the outcome's Capacity is counted. */
  settle(outcome: TransactionOutcome): Promise<void>;
}

/**
 * `process`, with what is no fault of a job kept from spending its attempts: Capacity short (CapacityShortError),
 * or the chain out of reach (the node restarting, a dropped connection: isChainUnreachable). The job goes back to
 * wait `waitMs` (a block) and runs again, for as long as it takes; `onWait` runs first (a Capacity check, say).
 * Its other failures are retried with its backoff until its attempts run out, as before.
 */
export function waitingOutTheChain<T, R>(
  process: JobProcessor<T, R>,
  waitMs: number,
  onWait: (error: unknown) => Promise<void> = async () => undefined,
): JobProcessor<T, R> {
  return async (job: Job<T, R>, context: JobContext) => {
    try {
      return await process(job, context);
    } catch (error) {
      if (!(error instanceof CapacityShortError) && !isChainUnreachable(error)) throw error;
      await onWait(error);
      context.log.info({ err: error }, 'waiting a block: no fault of the job');
      await job.moveToDelayed(Date.now() + waitMs, context.token);
      throw new DelayedError();
    }
  };
}

/**
 * The chain side every submitting worker starts, in two steps. `start` checks that the key is the provider's and
 * builds the submitter (with its shared nonces) and the tracker; the service then builds its processors and
 * queue workers on them. `follow`, the last step of the service's start, watches Capacity (pausing the given
 * workers while it is short), settles tracked transactions under the `transaction-tracker` lease and reports
 * Capacity in /healthz; when it fails it stops what it started, so an attempt of `startWhenChainReady` may be
 * undone and tried again.
 */
export class CapacityPipeline {
  readonly submitter: CapacitySubmitter;
  readonly tracker: TransactionTracker;
  /** The timing contract on this chain (its block time): the signing workers take their job lock from it. */
  readonly timing: ChainTiming;
  private monitor: CapacityMonitor | undefined;
  private settle: ((outcome: TransactionOutcome) => Promise<void>) | undefined;

  private constructor(
    private readonly connection: ChainConnection,
    private readonly runtime: PipelineRuntime,
    private readonly service: string,
    readonly key: ProviderKey,
    timing: ChainTiming,
  ) {
    const { api } = connection;
    const { redis, config } = runtime;
    const prefix = config.CACHE_KEY_PREFIX;
    this.timing = timing.onChain(connection.blockTimeMs);
    const nonces = new NonceManager(redis, api, key.address, { prefix: SIGNING_KEYSPACE, timing: this.timing });
    this.submitter = new CapacitySubmitter(api, key, nonces, { timing: this.timing, logger: runtime.logger });
    this.tracker = new TransactionTracker(api, redis, {
      prefix,
      timing: this.timing,
      trustUnfinalized: config.TRUST_UNFINALIZED_BLOCKS,
      onOutcome: (outcome) => this.settleOutcome(outcome),
      metrics: runtime.metrics,
      finalizedHead: () => connection.heads().finalized,
      logger: runtime.logger,
      ...(runtime.queues?.replicatedWrites ? { replicatedWrites: runtime.queues.replicatedWrites } : {}),
    });
  }

  /**
   * Loads the provider key and checks on chain that it controls PROVIDER_ID, a registered provider. `timing` (the
   * worker's, see `chainTiming`) is checked again with the chain's block time.
   */
  static async start(
    connection: ChainConnection,
    runtime: PipelineRuntime,
    service: string,
    timing: ChainTiming,
  ): Promise<CapacityPipeline> {
    const key = await loadProviderKey(runtime.config.PROVIDER_ACCOUNT_SEED_PHRASE);
    await verifyProvider(connection.api, key, runtime.config.PROVIDER_ID);
    return new CapacityPipeline(connection, runtime, service, key, timing);
  }

  /** Capacity as last checked; undefined until the pipeline follows. */
  capacity(): CapacityState | undefined {
    return this.monitor?.current();
  }

  /**
   * A queue processor whose jobs spend Capacity. A CapacityShortError is not a failure: the job goes back to wait
   * a block, and Capacity is checked at once, so the monitor pauses the worker until it is back.
   */
  processor<T, R>(process: JobProcessor<T, R>): JobProcessor<T, R> {
    return waitingOutTheChain(process, this.connection.blockTimeMs, async (error) => {
      if (error instanceof CapacityShortError) await this.monitor?.check().catch(() => undefined);
    });
  }

  /** Starts following (see the class): the last step of a start, as nothing after it is undone. */
  async follow(options: FollowingOptions): Promise<ChainPipeline> {
    const { config, redis, metrics, logger } = this.runtime;
    const monitor = new CapacityMonitor({
      api: this.connection.api,
      redis,
      providerId: config.PROVIDER_ID,
      limits: config.CAPACITY_LIMIT,
      prefix: config.CACHE_KEY_PREFIX,
      service: this.service,
      pausable: options.pausable,
      metrics,
    });
    this.monitor = monitor;
    this.settle = options.settle;
    // Exported from the start (0), so that a rate over it and the runbook's query read a value before any gap.
    const filled = gapsFilled(metrics);
    try {
      const unfollow = await followTransactions({
        connection: this.connection,
        tracker: this.tracker,
        capacity: monitor,
        runtime: this.runtime,
        logger,
        fillGaps: async () => {
          const nonce = await this.submitter.fillStandingGap();
          if (nonce === undefined) return;
          filled.inc();
          logger.warn(
            { nonce },
            "a nonce gap stood still behind the provider's transactions: filled with an empty batch",
          );
        },
      });
      return { stop: unfollow };
    } catch (error) {
      this.monitor = undefined;
      this.settle = undefined;
      throw error;
    }
  }

  /** The tracker's handler: the Capacity the transaction withdrew counts against the limits before it settles. */
  private async settleOutcome(outcome: TransactionOutcome): Promise<void> {
    const { monitor, settle } = this;
    // The tracker scans only once the pipeline follows.
    if (!monitor || !settle) throw new Error('a transaction outcome arrived before the pipeline followed the chain');
    if (outcome.status !== 'expired') {
      await monitor.recordOutcome(outcome);
      await monitor.check();
    }
    await settle(outcome);
  }
}
