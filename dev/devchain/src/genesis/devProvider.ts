import type { AccountHex, PalletRuntime } from '../runtime/context.js';
import { stake, type CapacityConstants } from '../pallets/capacity/index.js';
import { createMsa, registerProvider } from '../pallets/msa/accounts.js';

/** What the gateway's local setup does by hand: Alice's MSA 1, registered as a provider, with Capacity staked. */
export const DEV_PROVIDER = { name: 'alice', stake: 2_000_000_000_000_000n } as const;

export function devProviderGenesis(alice: AccountHex, maxKeys: number, capacity: CapacityConstants): PalletRuntime {
  return {
    name: 'DevProviderGenesis',
    genesis: (context) => {
      const msaId = createMsa(context, alice, maxKeys);
      const entry = {
        defaultName: DEV_PROVIDER.name,
        localizedNames: new Map(),
        defaultLogo250100PngCid: '',
        localizedLogo250100PngCids: new Map(),
      };
      registerProvider(context, msaId, entry, DEV_PROVIDER.name.length, 256);
      stake(context, alice, msaId, DEV_PROVIDER.stake, capacity);
    },
  };
}
