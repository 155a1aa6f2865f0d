import type { Call } from '@polkadot/types/interfaces';
import type { AccountHex, BlockHookContext, DispatchContext, PalletRuntime } from '../runtime/context.js';
import { DispatchFailure, ModuleError } from '../runtime/errors.js';

const requireSudoKey = (context: DispatchContext) => {
  if (context.origin.type !== 'signed') throw new DispatchFailure('BadOrigin');
  const key = context.storage.get(context.state, 'Sudo', 'Key').toHex();
  if (key !== context.origin.who) throw new ModuleError('Sudo', 'RequireSudo');
};

/** sudo.sudo: the key holder dispatches a call as Root; the inner outcome is reported in Sudid. */
export function sudoPallet(key: AccountHex): PalletRuntime {
  return {
    name: 'Sudo',
    genesis: (context: BlockHookContext) => context.storage.set(context.state, 'Sudo', 'Key', [], key),
    feeless: ['sudo'],
    calls: {
      sudo: (context, args) => {
        requireSudoKey(context);
        try {
          context.state.transactional(() => context.dispatch(args.call as unknown as Call, { type: 'root' }));
          context.deposit('Sudo', 'Sudid', { sudoResult: { Ok: null } });
        } catch (error) {
          context.deposit('Sudo', 'Sudid', { sudoResult: { Err: context.dispatchError(error) } });
        }
      },
    },
  };
}
