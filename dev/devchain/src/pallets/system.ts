import { DispatchFailure } from '../runtime/errors.js';
import type { PalletRuntime } from '../runtime/context.js';

/** system.remark and remarkWithEvent; the rest of System (accounts, events, block hashes) is the chain's. */
export function systemPallet(): PalletRuntime {
  return {
    name: 'System',
    calls: {
      remark: () => undefined,
      remarkWithEvent: (context, args) => {
        if (context.origin.type !== 'signed') throw new DispatchFailure('BadOrigin');
        const hash = context.registry.hash((args.remark as { toU8a(bare: boolean): Uint8Array }).toU8a(true));
        context.deposit('System', 'Remarked', { sender: context.origin.who, hash });
      },
    },
  };
}
