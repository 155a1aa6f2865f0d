import { MAX_REORG_DEPTH, SealError, type Chain } from '../chain/chain.js';
import { invalidParams, RpcError } from './errors.js';

type Handler = (params: unknown[]) => unknown;

/**
 * Mutes subscriptions as a node whose subscriptions stop while its sockets stay open: every subscription open when
 * `silence` is called sends nothing more; later ones work.
 */
export class SubscriptionSilencer {
  private opened = 0;
  private silencedBelow = 0;

  /** Wraps a new subscription's sink so that it goes quiet once silenced. */
  sink<T>(send: (result: T) => void): (result: T) => void {
    const serial = this.opened++;
    return (result) => {
      if (serial >= this.silencedBelow) send(result);
    };
  }

  /** Silences every subscription open now; returns how many there have been so far. */
  silence(): number {
    this.silencedBelow = this.opened;
    return this.opened;
  }
}

const blockNumber = (value: unknown, name: string): number | undefined => {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    throw invalidParams(`${name} must be a block number`);
  return value;
};

/** Schedules the devchain's runtime upgrade at block `at` (the next block when omitted). */
export type RuntimeUpgrader = (at?: number) => Promise<{ at: number; specVersion: number }>;

/** A step that fails with the node's code for what it refuses (SealError). */
async function refusing<T>(step: () => T | Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof SealError) throw new RpcError(error.code, error.message);
    throw error;
  }
}

/**
 * The devchain's own RPCs (`dev_*`, no node has them): tests call them to make the chain behave as a live network
 * does at its worst moments.
 */
export function devMethods(
  chain: Chain,
  silencer: SubscriptionSilencer,
  upgradeRuntime?: RuntimeUpgrader,
): Record<string, Handler> {
  return {
    dev_stallFinality: ([at]) => refusing(() => chain.stallFinality(blockNumber(at, 'at'))),
    dev_resumeFinality: () => chain.resumeFinality(),
    dev_silenceSubscriptions: () => silencer.silence(),
    dev_holdSealing: () => chain.holdSealing(),
    dev_resumeSealing: () => chain.resumeSealing(),
    dev_reorg: async ([depth, options]) => {
      if (typeof depth !== 'number' || !Number.isInteger(depth) || depth < 1 || depth > MAX_REORG_DEPTH)
        throw invalidParams(`depth must be an integer from 1 to ${MAX_REORG_DEPTH}`);
      if (options !== undefined && options !== null && typeof options !== 'object')
        throw invalidParams('options must be an object');
      const dropRetracted = (options as { dropRetracted?: unknown } | null | undefined)?.dropRetracted;
      if (dropRetracted !== undefined && typeof dropRetracted !== 'boolean')
        throw invalidParams('dropRetracted must be a boolean');
      const { best, retracted, enacted } = await refusing(() =>
        chain.reorganize({ depth, dropRetracted: dropRetracted ?? false }),
      );
      return { best: best.hash, retracted: retracted.map((b) => b.hash), enacted: enacted.map((b) => b.hash) };
    },
    ...(upgradeRuntime
      ? { dev_upgradeRuntime: ([at]: unknown[]) => refusing(() => upgradeRuntime(blockNumber(at, 'at'))) }
      : {}),
  };
}
