import type { ComponentRuntime } from '@frequency-gateway/platform';
import type { ChainConnection, OpeningChain } from './connection.js';

/** The chain-side half of a worker: what it started, and how to stop it. */
export interface ChainPipeline {
  stop(): Promise<void>;
}

/**
 * Given to each attempt to start a pipeline: what the attempt set up before a later step failed is undone
 * (last first) before the next attempt, so that a retry never finds a second queue worker or subscription.
 */
export interface StartAttempt {
  onFailure(undo: () => Promise<void> | void): void;
}

export interface PipelineStartOptions {
  /** Pause after the first failed attempt; it doubles after each further failure. Default 1 s. */
  firstRetryDelayMs?: number;
  /** Longest pause between attempts. Default 60 s. */
  maxRetryDelayMs?: number;
}

type PipelineRuntime = Pick<ComponentRuntime<unknown>, 'readiness' | 'shutdown' | 'logger' | 'startup'>;

/** Waits `ms`, or less when `wake` fires or `signal` aborts. */
function pause(ms: number, signal: AbortSignal, wakeOn?: (wake: () => void) => () => void): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      unwatch?.();
      resolve();
    };
    const timer = setTimeout(done, ms);
    timer.unref();
    signal.addEventListener('abort', done, { once: true });
    const unwatch = wakeOn?.(done);
  });
}

/** Resolves with `promise`, or with undefined once `signal` aborts. */
function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise<T | undefined>((resolve, reject) => {
    const aborted = () => resolve(undefined);
    signal.addEventListener('abort', aborted, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', aborted));
  });
}

/**
 * Starts a worker's chain-side pipeline once the node answers, and keeps trying until it runs: an attempt that
 * fails (the chain went away during it, the key is not yet the provider's, a read timed out) is undone and
 * tried again after a pause that doubles from 1 s up to 60 s; a reconnection of the chain ends the pause at
 * once. Until the pipeline runs the worker reports not ready under `name`, with the last failure as the
 * reason; each distinct failure is logged once (at error), repeats only at debug. The part is watched by the
 * runtime's StartupWatch: still not started after LIVENESS_MAX_PIPELINE_START_MS, /livez fails and the pod
 * is restarted.
 */
export function startWhenChainReady(
  chain: OpeningChain,
  runtime: PipelineRuntime,
  name: string,
  start: (connection: ChainConnection, attempt: StartAttempt) => Promise<ChainPipeline>,
  options: PipelineStartOptions = {},
): { stop(): Promise<void> } {
  const { logger, shutdown } = runtime;
  const signal = shutdown.signal;
  const firstDelayMs = options.firstRetryDelayMs ?? 1_000;
  const maxDelayMs = options.maxRetryDelayMs ?? 60_000;
  const startup = runtime.startup.begin(name);
  let pipeline: ChainPipeline | undefined;
  let problem = 'waiting for the chain';
  runtime.readiness.add({
    name,
    probe: async () => {
      if (!pipeline) throw new Error(problem);
    },
  });

  const run = async () => {
    let failures = 0;
    let lastReason: string | undefined;
    let known: ChainConnection | undefined;
    while (!signal.aborted) {
      const undo: (() => Promise<void> | void)[] = [];
      try {
        const connection = await unlessAborted(chain.ready(), signal);
        if (!connection) return;
        known = connection;
        const started = await start(connection, { onFailure: (step) => void undo.push(step) });
        if (signal.aborted) {
          // The worker began to stop while this attempt ran: nothing will stop it later.
          await started.stop();
          return;
        }
        pipeline = started;
        startup.started();
        if (failures > 0)
          logger.info({ failedAttempts: failures }, `the ${name} pipeline started after ${failures} failed attempts`);
        return;
      } catch (error) {
        for (const step of undo.reverse()) {
          await Promise.resolve()
            .then(step)
            .catch((cause: unknown) =>
              logger.warn({ err: cause }, `undoing a failed start of the ${name} pipeline failed`),
            );
        }
        failures += 1;
        const reason = error instanceof Error ? error.message : String(error);
        const delayMs = Math.min(firstDelayMs * 2 ** (failures - 1), maxDelayMs);
        problem = `the ${name} pipeline could not start (${failures} failed attempts, the next in ${Math.ceil(delayMs / 1000)} s): ${reason}`;
        startup.failed(reason);
        if (reason !== lastReason) {
          logger.error(
            { err: error, failedAttempts: failures, retryInMs: delayMs },
            `the ${name} pipeline could not start; retrying`,
          );
        } else {
          logger.debug(
            { failedAttempts: failures, retryInMs: delayMs, reason },
            `the ${name} pipeline could not start again`,
          );
        }
        lastReason = reason;
        // A chain that comes back (it went away during the attempt, or was replaced) is worth a try at once.
        const api = known?.api;
        await pause(delayMs, signal, (wake) => {
          if (!api) return () => undefined;
          api.on('connected', wake);
          return () => api.off('connected', wake);
        });
      }
    }
  };
  void run().catch((error: unknown) => logger.error({ err: error }, `the ${name} pipeline start loop failed`));

  return { stop: async () => pipeline?.stop() };
}
