import { DispatchFailure } from '../runtime/errors.js';
import type { PalletRuntime } from '../runtime/context.js';

/** timestamp.set: the inherent every block starts with. */
export function timestampPallet(): PalletRuntime {
  return {
    name: 'Timestamp',
    calls: {
      set: (context, args) => {
        if (context.origin.type !== 'none') throw new DispatchFailure('BadOrigin');
        context.storage.set(context.state, 'Timestamp', 'Now', [], args.now);
        context.storage.set(context.state, 'Timestamp', 'DidUpdate', [], true);
      },
    },
    onFinalize: (context) => context.storage.set(context.state, 'Timestamp', 'DidUpdate', [], undefined),
  };
}
