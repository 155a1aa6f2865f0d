import { options as frequencyOptions } from '@frequency-chain/api-augment';
import type { Logger } from '@frequency-gateway/platform';
import { ApiPromise } from '@polkadot/api';
import { Gauge, type Registry } from 'prom-client';
import { forgetFailedRegistryLookups } from './registrySwap.js';
import { keepRuntimeApis } from './runtimeApis.js';
import { NodeSet } from './nodes.js';
import { ChainQueries } from './queries.js';

export interface ChainConnection {
  api: ApiPromise;
  /** The typed reads of this connection (one object for its whole life: the api reconnects underneath). */
  queries: ChainQueries;
  /** The chain's block time (Aura slot duration), for timeouts and staleness. */
  blockTimeMs: number;
  /** Resolves when the chain answers and its finality is not stalled; rejects otherwise (a readiness probe). */
  probe(signal: AbortSignal): Promise<void>;
  /** The newest best and finalized block numbers the node announced (no round trip). */
  heads(): { best: number; finalized: number };
  close(): Promise<void>;
}

/** A connection that may still be coming up: opened at once, usable once `ready()` resolves. */
export interface OpeningChain {
  /** ws(s) host of the node in use, for readiness output (no credentials, no path). */
  readonly target: string;
  /** Whether the first connection and metadata load have completed. */
  readonly isReady: boolean;
  /** The connection, once ready; rejects with ChainNotReadyError after `timeoutMs` (or on close). */
  ready(timeoutMs?: number): Promise<ChainConnection>;
  probe(signal: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

export interface ConnectOptions {
  /**
   * ws:// or wss:// URL of a Frequency node, or several nodes of one chain (FREQUENCY_API_WS_URL): one is used at a
   * time, and the next when it closes, stops answering or its subscriptions go silent.
   */
  url: string | readonly string[];
  /** A node that has sent nothing for this long after a request is left for the next (default 5 s). */
  answerWithinMs?: number;
  /** How often the node in use is checked (default 2 s). */
  watchEveryMs?: number;
  /** Finality counts as stalled when the best block is ahead and the finalized head has not moved for this long. */
  staleAfterMs?: number;
  /** Pause between reconnection attempts. */
  reconnectMs?: number;
  /** Where connection transitions are told (unreachable, connected, lost): one line per transition, not per attempt. */
  logger?: Logger;
  /** Where the node's best and finalized block numbers are exported (chain_best_block, chain_finalized_block). */
  metrics?: Registry;
}

/**
 * The head gauges in `registry`, created once per registry: a connection opened again (a worker's start retried)
 * sets the same ones.
 */
function headGauges(registry: Registry): { best: Gauge; finalized: Gauge } {
  const gauge = (name: string, help: string) =>
    (registry.getSingleMetric(name) as Gauge | undefined) ?? new Gauge({ name, help, registers: [registry] });
  return {
    best: gauge('chain_best_block', 'The newest best block number the Frequency node announced'),
    finalized: gauge('chain_finalized_block', 'The newest finalized block number the Frequency node announced'),
  };
}

/** The chain cannot be reached now (not connected, metadata not loaded, the connection dropped): retry later. */
export class ChainNotReadyError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ChainNotReadyError';
  }
}

/** A WebSocket error event (or anything else a provider emits) as one line of text. */
function reasonOf(error: unknown): string {
  const message = (error as { message?: unknown } | undefined)?.message;
  if (typeof message === 'string' && message !== '') return message;
  return error instanceof Error ? error.name : 'the connection failed';
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal, message: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      if (signal.aborted) reject(new ChainNotReadyError(message));
      signal.addEventListener('abort', () => reject(new ChainNotReadyError(message)), { once: true });
    }),
  ]);
}

/**
 * Opens `@polkadot/api` (with Frequency's types and RPCs) on a reconnecting WebSocket without waiting for the
 * node: a component starts, reports not-ready, and becomes ready when the node answers. Once connected it
 * follows the finalized head, so readiness can tell a stalled chain from an idle one: an idle chain (instant
 * sealing, nothing to seal) has its best block finalized; a stalled one has the best block ahead and a
 * finalized head that stopped moving.
 */
export function openChain(options: ConnectOptions): OpeningChain {
  const reconnectMs = options.reconnectMs ?? 2_500;
  const urls = typeof options.url === 'string' ? [options.url] : [...options.url];
  const nodes = new NodeSet({
    urls,
    reconnectMs,
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });
  const { provider } = nodes;
  const api = new ApiPromise({ ...frequencyOptions, provider, noInitWarn: true });
  forgetFailedRegistryLookups(api);
  // The api rejects an internal ready-or-error promise on the first connection error, and nobody else looks at
  // it: without this, a node that is not up yet (a fresh cluster, a DNS name not served yet) would end the
  // process with an unhandled rejection. The provider reconnects on its own; readiness reports the wait.
  api.isReadyOrError.catch(() => undefined);
  api.on('error', () => undefined);
  // The link's state as the provider reports it, for readiness output and for one log line per transition.
  let link: { state: 'opening' | 'up' | 'down'; reason?: string } = { state: 'opening' };
  const log = options.logger?.child({ chain: urls.map((url) => new URL(url).host).join(',') });
  provider.on('error', (error: unknown) => {
    const reason = reasonOf(error);
    const target = nodes.target;
    if (link.state !== 'down') {
      log?.warn(
        { reason, retryEveryMs: reconnectMs },
        link.state === 'up'
          ? `lost the chain at ${target} (${reason}); reconnecting`
          : `the chain at ${target} is not reachable (${reason}); retrying until it answers`,
      );
    }
    link = { state: 'down', reason };
  });
  provider.on('disconnected', () => {
    if (link.state === 'up') {
      log?.warn({ retryEveryMs: reconnectMs }, `disconnected from the chain at ${nodes.target}; reconnecting`);
      link = { state: 'down', reason: 'disconnected' };
    }
  });
  provider.on('connected', () => {
    if (link.state !== 'up') log?.info(`connected to the chain at ${nodes.target}`);
    link = { state: 'up' };
  });
  const gauges = options.metrics ? headGauges(options.metrics) : undefined;
  let finalized = { number: -1, at: Date.now() };
  let best = -1;
  let unsubscribe: (() => void)[] = [];
  let closed = false;
  let connection: ChainConnection | undefined;

  const probe = async (signal: AbortSignal) => {
    const target = nodes.target;
    const why = link.reason ? `: ${link.reason}` : '';
    if (!api.isConnected) throw new ChainNotReadyError(`not connected to the chain at ${target}${why}`);
    if (!connection) throw new ChainNotReadyError(`loading the chain's metadata from ${target}`);
    // A round trip proves the node answers now, not only that the socket is open.
    await abortable(api.rpc.system.health(), signal, 'timeout');
    const stalledFor = Date.now() - finalized.at;
    if (best > finalized.number && stalledFor > staleAfter()) {
      throw new ChainNotReadyError(
        `finality stalled: finalized #${finalized.number} for ${Math.round(stalledFor / 1000)} s, best #${best}`,
      );
    }
  };
  const staleAfter = () => options.staleAfterMs ?? (connection?.blockTimeMs ?? 6_000) * 10;
  const close = async () => {
    closed = true;
    nodes.close();
    clearInterval(watch);
    for (const stop of unsubscribe) stop();
    await api.disconnect();
  };

  const opened: Promise<ChainConnection> = api.isReady.then(async () => {
    const slot = (api.consts.aura as unknown as { slotDuration?: { toNumber(): number } } | undefined)?.slotDuration;
    const blockTimeMs = slot?.toNumber() ?? 6_000;
    unsubscribe = await Promise.all([
      api.rpc.chain.subscribeFinalizedHeads((header) => {
        const number = header.number.toNumber();
        if (number !== finalized.number) finalized = { number, at: Date.now() };
        gauges?.finalized.set(number);
      }),
      api.rpc.chain.subscribeNewHeads((header) => {
        best = Math.max(best, header.number.toNumber());
        gauges?.best.set(best);
      }),
      keepRuntimeApis(api, log),
    ]);
    if (closed) for (const stop of unsubscribe) stop();
    connection = {
      api,
      queries: new ChainQueries(api),
      blockTimeMs,
      probe,
      heads: () => ({ best, finalized: finalized.number }),
      close,
    };
    return connection;
  });
  opened.catch(() => undefined);

  const watch = nodes.watch({
    best: () => best,
    ready: () => !closed && connection !== undefined && api.isConnected,
    answerWithinMs: options.answerWithinMs ?? 5_000,
    everyMs: options.watchEveryMs ?? 2_000,
  });

  return {
    get target() {
      return nodes.target;
    },
    get isReady() {
      return connection !== undefined;
    },
    ready: async (timeoutMs?: number) => {
      if (closed) throw new ChainNotReadyError('connection closed');
      if (connection?.api.isConnected) return connection;
      // Not connected yet, or connection lost: wait for the (re)connection, for at most timeoutMs.
      const connected = opened.then((ready) =>
        ready.api.isConnected
          ? ready
          : new Promise<ChainConnection>((resolve) => ready.api.once('connected', () => resolve(ready))),
      );
      if (timeoutMs === undefined) return connected;
      return abortable(connected, AbortSignal.timeout(timeoutMs), `the chain at ${nodes.target} is not reachable`);
    },
    probe,
    close,
  };
}

/** Connects and waits for the node (workers that cannot do anything without it). */
export async function connectChain(options: ConnectOptions): Promise<ChainConnection> {
  return openChain(options).ready();
}
