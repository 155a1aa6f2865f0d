import type { ComponentRuntime, Logger } from '@frequency-gateway/platform';
import type { CapacityMonitor } from './capacity.js';
import type { ChainConnection } from './connection.js';
import type { TransactionTracker } from './tracker/index.js';

export interface FollowOptions {
  connection: ChainConnection;
  tracker: TransactionTracker;
  capacity: CapacityMonitor;
  runtime: Pick<ComponentRuntime<unknown>, 'readiness' | 'lead'>;
  logger: Logger;
  /** Run after each scan, under the lease: fills a nonce gap that stood still (CapacitySubmitter.fillStandingGap). */
  fillGaps?: () => Promise<unknown>;
}

/**
 * Follows a worker's transactions: the tracker scans under the `transaction-tracker` lease (one replica at a
 * time), woken by every finalized head, and after each scan fills a nonce gap that stood still (`fillGaps`);
 * Capacity is watched and reported by an optional readiness check (`capacity`), so an exhausted epoch shows in
 * /healthz without taking the worker out of service. When a step fails (the chain went away), what the earlier
 * steps started is stopped before the error is thrown, so the caller may try again.
 */
export async function followTransactions(options: FollowOptions): Promise<() => Promise<void>> {
  const { connection, tracker, capacity, runtime, logger } = options;
  let unsubscribe: () => void;
  try {
    await capacity.start();
    unsubscribe = await connection.api.rpc.chain.subscribeFinalizedHeads(() => tracker.nudge());
  } catch (error) {
    capacity.close();
    throw error;
  }
  const scanning = runtime.lead(
    'transaction-tracker',
    ({ signal, progress }) =>
      tracker.scanUntil(signal, {
        intervalMs: connection.blockTimeMs,
        onError: (error) => logger.warn({ err: error }, 'transaction scan failed; retrying'),
        onProgress: progress,
        ...(options.fillGaps ? { afterScan: options.fillGaps } : {}),
      }),
    { reportsProgress: true },
  );
  // Last: a readiness check cannot be registered twice, and nothing after it can fail.
  runtime.readiness.add({
    name: 'capacity',
    required: false,
    probe: async () => {
      const state = capacity.current();
      if (state && !state.available)
        throw new Error(`${state.reason}: submissions paused in epoch ${state.epoch}, resume when Capacity is back`);
    },
  });
  return async () => {
    unsubscribe();
    capacity.close();
    await scanning.stop();
  };
}
