import { options as frequencyOptions } from '@frequency-chain/api-augment';
import { ApiPromise, WsProvider } from '@polkadot/api';

export interface ChainConnection {
  api: ApiPromise;
  /** The chain's block time (Aura slot duration), for timeouts and staleness. */
  blockTimeMs: number;
  /** Resolves when the chain answers and its finality is not stalled; rejects otherwise (a readiness probe). */
  probe(signal: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** ws:// or wss:// URL of a Frequency node (FREQUENCY_API_WS_URL). */
  url: string;
  /** Finality counts as stalled when the best block is ahead and the finalized head has not moved for this long. */
  staleAfterMs?: number;
  /** Pause between reconnection attempts. */
  reconnectMs?: number;
}

export class ChainNotReadyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChainNotReadyError';
  }
}

/**
 * Connects `@polkadot/api` (with Frequency's types and RPCs) to a node over a reconnecting WebSocket and
 * follows its finalized head, so that readiness can tell a stalled chain from an idle one: an idle chain
 * (instant sealing, nothing to seal) has its best block finalized; a stalled one has the best block ahead
 * and a finalized head that stopped moving.
 */
export async function connectChain(options: ConnectOptions): Promise<ChainConnection> {
  const provider = new WsProvider(options.url, options.reconnectMs ?? 2_500);
  const api = await ApiPromise.create({ ...frequencyOptions, provider, noInitWarn: true });
  const slot = (api.consts.aura as unknown as { slotDuration?: { toNumber(): number } } | undefined)?.slotDuration;
  const blockTimeMs = slot?.toNumber() ?? 6_000;
  const staleAfterMs = options.staleAfterMs ?? blockTimeMs * 10;
  let finalized = { number: -1, at: Date.now() };
  let best = -1;
  const unsubscribe = await Promise.all([
    api.rpc.chain.subscribeFinalizedHeads((header) => {
      const number = header.number.toNumber();
      if (number !== finalized.number) finalized = { number, at: Date.now() };
    }),
    api.rpc.chain.subscribeNewHeads((header) => {
      best = Math.max(best, header.number.toNumber());
    }),
  ]);
  return {
    api,
    blockTimeMs,
    probe: async (signal) => {
      if (!api.isConnected) throw new ChainNotReadyError(`not connected to ${new URL(options.url).host}`);
      // A round trip proves the node answers now, not only that the socket is open.
      await Promise.race([
        api.rpc.system.health(),
        new Promise((_, reject) => signal.addEventListener('abort', () => reject(new ChainNotReadyError('timeout')))),
      ]);
      const stalledFor = Date.now() - finalized.at;
      if (best > finalized.number && stalledFor > staleAfterMs) {
        throw new ChainNotReadyError(
          `finality stalled: finalized #${finalized.number} for ${Math.round(stalledFor / 1000)} s, best #${best}`,
        );
      }
    },
    close: async () => {
      for (const stop of unsubscribe) stop();
      await api.disconnect();
    },
  };
}
