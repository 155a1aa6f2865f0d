import type { ApiPromise } from '@polkadot/api';

interface RpcCore {
  setRegistrySwap(swap: (blockHash: Uint8Array) => Promise<unknown>): void;
}

/** How many block registries the RPC layer may keep before it starts a fresh keeper. */
const KEEP_AT_MOST = 10_000;

/**
 * The api's RPC layer looks up the type registry of every block a call names (`getBlock(hash)`,
 * `query.x.at(hash)`) and keeps the answer per block hash for the life of the api, a failed look-up as well: a call
 * naming a block whose look-up a lost node cut off then fails for good, however often it is asked again (the
 * tracker's scan of that block stalled every outcome). Here the layer's keeper is started afresh after a failed
 * look-up, which forgets it, and after `KEEP_AT_MOST` blocks, which bounds what it keeps.
 */
export function forgetFailedRegistryLookups(api: ApiPromise): void {
  const core = (api as unknown as { _rpcCore: RpcCore })._rpcCore;
  let kept = 0;
  const renew = () => {
    kept = 0;
    core.setRegistrySwap(swap);
  };
  const swap = (blockHash: Uint8Array) => {
    if (++kept === KEEP_AT_MOST) queueMicrotask(renew);
    return api.getBlockRegistry(blockHash).catch((error: unknown) => {
      queueMicrotask(renew);
      throw error;
    });
  };
  renew();
}
