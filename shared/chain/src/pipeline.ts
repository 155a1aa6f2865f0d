import type { ComponentRuntime, Logger } from '@frequency-gateway/platform';
import type { CapacityMonitor } from './capacity.js';
import type { ChainConnection, OpeningChain } from './connection.js';
import type { TransactionTracker } from './tracker.js';

/** The chain-side half of a worker: what it started, and how to stop it. */
export interface ChainPipeline {
  stop(): Promise<void>;
}

/**
 * Starts a worker's chain-side pipeline once the node answers. Until then (or when `start` fails, e.g. the key
 * is not the provider's) the worker reports not ready under `name`, with the reason in /healthz.
 */
export function startWhenChainReady(
  chain: OpeningChain,
  runtime: Pick<ComponentRuntime<unknown>, 'readiness' | 'shutdown' | 'logger'>,
  name: string,
  start: (connection: ChainConnection) => Promise<ChainPipeline>,
): { stop(): Promise<void> } {
  let pipeline: ChainPipeline | undefined;
  let problem = 'waiting for the chain';
  runtime.readiness.add({
    name,
    probe: async () => {
      if (!pipeline) throw new Error(problem);
    },
  });
  void (async () => {
    try {
      const connection = await chain.ready();
      if (runtime.shutdown.signal.aborted) return;
      pipeline = await start(connection);
    } catch (error) {
      problem = (error as Error).message;
      runtime.logger.error({ err: error }, `the ${name} pipeline could not start`);
    }
  })();
  return { stop: async () => pipeline?.stop() };
}

export interface FollowOptions {
  connection: ChainConnection;
  tracker: TransactionTracker;
  capacity: CapacityMonitor;
  runtime: Pick<ComponentRuntime<unknown>, 'readiness' | 'lead'>;
  logger: Logger;
}

/**
 * Follows a worker's transactions: the tracker scans under the `transaction-tracker` lease (one replica at a
 * time), woken by every finalized head; Capacity is watched and reported by an optional readiness check
 * (`capacity`), so an exhausted epoch shows in /healthz without taking the worker out of service.
 */
export async function followTransactions(options: FollowOptions): Promise<() => Promise<void>> {
  const { connection, tracker, capacity, runtime, logger } = options;
  await capacity.start();
  runtime.readiness.add({
    name: 'capacity',
    required: false,
    probe: async () => {
      const state = capacity.current();
      if (state && !state.available)
        throw new Error(`${state.reason}: submissions paused in epoch ${state.epoch}, resume when Capacity is back`);
    },
  });
  const scanning = runtime.lead('transaction-tracker', ({ signal }) =>
    tracker.scanUntil(signal, {
      intervalMs: connection.blockTimeMs,
      onError: (error) => logger.warn({ err: error }, 'transaction scan failed; retrying'),
    }),
  );
  const unsubscribe = await connection.api.rpc.chain.subscribeFinalizedHeads(() => tracker.nudge());
  return async () => {
    unsubscribe();
    capacity.close();
    await scanning.stop();
  };
}
