import type { Call } from '@polkadot/types/interfaces';
import type { Codec } from '@polkadot/types/types';
import type { DispatchContext, PalletRuntime } from '../runtime/context.js';

/**
 * Runs calls in order under the caller's origin, as pallet_utility does. `batchAll` is atomic: any failure
 * reverts every call and becomes the extrinsic's error. `batch` stops at the first failure and keeps what
 * ran before it; `forceBatch` runs them all.
 */
export function runBatch(
  context: DispatchContext,
  calls: readonly Call[],
  mode: 'all' | 'interruptible' | 'force',
): void {
  let failures = 0;
  for (const [index, call] of calls.entries()) {
    if (mode === 'all') {
      context.dispatch(call, context.origin);
      context.deposit('Utility', 'ItemCompleted');
      continue;
    }
    try {
      context.state.transactional(() => context.dispatch(call, context.origin));
      context.deposit('Utility', 'ItemCompleted');
    } catch (error) {
      const dispatchError = context.dispatchError(error);
      if (mode === 'interruptible') {
        context.deposit('Utility', 'BatchInterrupted', { index, error: dispatchError });
        return;
      }
      failures += 1;
      context.deposit('Utility', 'ItemFailed', { error: dispatchError });
    }
  }
  context.deposit('Utility', failures > 0 ? 'BatchCompletedWithErrors' : 'BatchCompleted');
}

const callsOf = (value: Codec | undefined) => [...(value as unknown as Call[])];

export function utilityPallet(): PalletRuntime {
  return {
    name: 'Utility',
    calls: {
      batch: (context, args) => runBatch(context, callsOf(args.calls), 'interruptible'),
      batchAll: (context, args) => runBatch(context, callsOf(args.calls), 'all'),
      forceBatch: (context, args) => runBatch(context, callsOf(args.calls), 'force'),
    },
  };
}
