import { ChainQueries } from '@frequency-gateway/chain';
import type { ApiPromise } from '@polkadot/api';

/**
 * Reads a provider's Capacity now, and later tells how much was spent in between, or undefined when the ledger was
 * replenished in between (a new epoch) and the difference means nothing.
 */
export async function capacityMeter(api: ApiPromise, providerId: number): Promise<() => Promise<bigint | undefined>> {
  const queries = new ChainQueries(api);
  const before = await queries.capacity(providerId);
  return async () => {
    const after = await queries.capacity(providerId);
    if (!before || !after || before.lastReplenishedEpoch !== after.lastReplenishedEpoch) return undefined;
    return before.remaining - after.remaining;
  };
}
