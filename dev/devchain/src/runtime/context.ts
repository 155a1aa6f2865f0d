import type { TypeRegistry } from '@polkadot/types';
import type { Call } from '@polkadot/types/interfaces';
import type { Codec } from '@polkadot/types/types';
import type { Overlay, StateView } from '../state/state.js';
import type { Storage } from '../state/storage.js';

/** Account ids travel as 0x-prefixed hex of the 32 bytes. */
export type AccountHex = `0x${string}`;

export type Origin = { type: 'signed'; who: AccountHex } | { type: 'root' } | { type: 'none' };

/** Everything a call handler may touch. */
export interface DispatchContext {
  readonly origin: Origin;
  readonly state: Overlay;
  readonly storage: Storage;
  readonly registry: TypeRegistry;
  readonly blockNumber: number;
  /** Emits `pallet.name` with the event's fields (camelCase names, anything the types accept). */
  deposit(pallet: string, name: string, data?: Record<string, unknown> | unknown[]): void;
  /** Dispatches a nested call (batches, sudo, capacity payment) under `origin`. */
  dispatch(call: Call, origin: Origin): void;
  /** The DispatchError value for what a nested dispatch threw. */
  dispatchError(error: unknown): Record<string, unknown> | string;
}

/** A call's arguments by their camelCase names. */
export type CallArgs = Record<string, Codec>;

export type CallHandler = (context: DispatchContext, args: CallArgs) => void;

/** What a block's start and end hooks see. */
export interface BlockHookContext {
  readonly state: Overlay;
  readonly storage: Storage;
  readonly registry: TypeRegistry;
  readonly blockNumber: number;
  deposit(pallet: string, name: string, data?: Record<string, unknown> | unknown[]): void;
}

/** What a transaction extension sees when it validates a call before it enters the pool or a block. */
export interface ValidationContext {
  readonly state: StateView;
  readonly storage: Storage;
  readonly registry: TypeRegistry;
  readonly signer: AccountHex;
  /** The number of the block that would execute the call. */
  readonly blockNumber: number;
  /** The top-level call and the length of the whole extrinsic. */
  readonly call: Call;
  readonly length: number;
}

/** Throws TransactionRejected (e.g. `Custom(n)`) when the call may not enter the pool. */
export type CallValidator = (context: ValidationContext, args: CallArgs) => void;

/** A pallet's behaviour on the devchain: its calls, hooks and genesis. */
export interface PalletRuntime {
  name: string;
  /** Handlers by camelCase call name; calls without one fail with `Other("not available on the devchain")`. */
  calls?: Record<string, CallHandler>;
  /** Checks the runtime's transaction extensions make for some calls (camelCase call name). */
  validate?: Record<string, CallValidator>;
  /**
   * Charges the fee of one of this pallet's calls before it dispatches (how FrequencyTxPayment takes
   * Capacity); throws TransactionRejected when it cannot pay.
   */
  chargeFee?: (context: DispatchContext, call: Call, length: number) => void;
  /** Calls declared `Pays::No` (camelCase names): no fee is charged. */
  feeless?: readonly string[];
  /** Writes the pallet's genesis state (block 0). */
  genesis?(context: BlockHookContext): void;
  onInitialize?(context: BlockHookContext): void;
  onFinalize?(context: BlockHookContext): void;
}
