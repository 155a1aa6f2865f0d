import type { Header } from '@polkadot/types/interfaces';
import { compactToU8a, u8aConcat, u8aToHex } from '@polkadot/util';
import { debit, readAccount, writeAccount } from '../pallets/balances.js';
import type { AccountHex, DispatchContext, Origin } from '../runtime/context.js';
import { DispatchFailure, INVALID, TransactionRejected } from '../runtime/errors.js';
import type { Runtime } from '../runtime/runtime.js';
import { verifySigned, type ChainFacts, type CheckedExtrinsic, type Hex } from './extrinsic.js';
import { Overlay, type Key, type StateView } from '../state/state.js';

export interface Block {
  number: number;
  hash: Hex;
  header: Header;
  extrinsics: Hex[];
  timestamp: number;
}

type Phase = { ApplyExtrinsic: number } | 'Initialization' | 'Finalization';

const DISPATCH_INFO = { weight: { refTime: 100_000_000, proofSize: 0 }, class: 'Normal', paysFee: 'Yes' };

/**
 * Builds one block on top of `parent`: initialisation, the timestamp inherent, each ready extrinsic in its
 * own transactional layer (fee and nonce committed even when the call fails, as on chain), finalisation,
 * then the header. Events are written to System.Events exactly as the runtime records them.
 */
export class BlockBuilder {
  private readonly overlay: Overlay;
  private readonly extrinsics: Uint8Array[] = [];
  readonly number: number;

  constructor(
    private readonly runtime: Runtime,
    private readonly facts: ChainFacts,
    parentState: StateView,
    private readonly parent: Block,
    private readonly timestamp: number,
    private readonly onInternalError: (error: unknown) => void,
  ) {
    this.overlay = new Overlay(parentState);
    this.number = parent.number + 1;
  }

  private deposit(phase: Phase) {
    return (pallet: string, name: string, data?: Record<string, unknown> | unknown[]) =>
      this.overlay.deposit(this.runtime.eventRecord(phase, this.runtime.encodeEvent(pallet, name, data)));
  }

  private context(origin: Origin, phase: Phase): DispatchContext {
    return {
      origin,
      state: this.overlay,
      storage: this.runtime.storage,
      registry: this.runtime.registry,
      blockNumber: this.number,
      deposit: this.deposit(phase),
      dispatch: (call, nestedOrigin) => this.runtime.dispatch(this.context(nestedOrigin, phase), call),
      dispatchError: (error) => this.runtime.dispatchError(error),
    };
  }

  private hookContext(phase: Phase) {
    const { overlay: state, runtime } = this;
    return {
      state,
      storage: runtime.storage,
      registry: runtime.registry,
      blockNumber: this.number,
      deposit: this.deposit(phase),
    };
  }

  /**
   * Starts the block: the System items of a new block, the runtime-upgrade check of the executive (the first
   * block a new runtime builds records it in `LastRuntimeUpgrade`), the pallets' `on_initialize`, a new code's
   * `CodeUpdated` (`codeUpdated`: this block enacts a runtime upgrade), then the timestamp inherent.
   */
  initialize({ codeUpdated = false }: { codeUpdated?: boolean } = {}): void {
    const { storage } = this.runtime;
    storage.set(this.overlay, 'System', 'Number', [], this.number);
    storage.set(this.overlay, 'System', 'ParentHash', [], this.parent.hash);
    storage.set(this.overlay, 'System', 'BlockHash', [this.parent.number], this.parent.hash);
    storage.set(this.overlay, 'System', 'Events', [], undefined);
    storage.set(this.overlay, 'System', 'EventCount', [], undefined);
    const { specVersion, specName } = this.runtime.facts.runtimeVersion;
    const last = storage.get(this.overlay, 'System', 'LastRuntimeUpgrade').toJSON() as { specVersion?: number } | null;
    if (last?.specVersion !== specVersion)
      storage.set(this.overlay, 'System', 'LastRuntimeUpgrade', [], { specVersion, specName });
    for (const pallet of this.runtime.palletRuntimes()) pallet.onInitialize?.(this.hookContext('Initialization'));
    if (codeUpdated) this.deposit('Initialization')('System', 'CodeUpdated');
    const inherent = this.runtime.registry.createType('Extrinsic', {
      method: this.runtime.call('timestamp', 'set', this.timestamp),
    });
    const phase = { ApplyExtrinsic: this.extrinsics.length };
    this.runtime.dispatch(this.context({ type: 'none' }, phase), inherent.method as never);
    this.deposit(phase)('System', 'ExtrinsicSuccess', { dispatchInfo: { ...DISPATCH_INFO, class: 'Mandatory' } });
    this.extrinsics.push(inherent.toU8a());
  }

  /** Applies a signed extrinsic, or rejects it when its nonce or fee no longer hold. */
  apply(extrinsic: CheckedExtrinsic): TransactionRejected | undefined {
    const signer = extrinsic.signer as AccountHex;
    const phase = { ApplyExtrinsic: this.extrinsics.length };
    const context = this.context({ type: 'signed', who: signer }, phase);
    const account = readAccount(context, signer);
    if (extrinsic.nonce !== account.nonce) return INVALID.stale();
    try {
      const call = extrinsic.extrinsic.method as never;
      const { storage, registry } = this.runtime;
      const validation = {
        state: this.overlay,
        storage,
        registry,
        signer,
        blockNumber: this.number,
        call,
        length: extrinsic.bytes.length,
      };
      this.runtime.validate(validation, extrinsic.extrinsic.method as never);
    } catch (error) {
      if (error instanceof TransactionRejected) return error;
      throw error;
    }
    const payment = this.runtime.payment(extrinsic.extrinsic.method);
    const chargesBalance = payment === 'tokens';
    try {
      this.overlay.transactional(() => {
        if (chargesBalance) debit(context, signer, extrinsic.fee, this.facts.existentialDeposit, true);
        if (payment === 'capacity')
          this.runtime.chargeFee(context, extrinsic.extrinsic.method as never, extrinsic.bytes.length);
      });
    } catch (error) {
      if (error instanceof DispatchFailure) return INVALID.payment();
      if (error instanceof TransactionRejected) return error;
      throw error;
    }
    if (chargesBalance) context.deposit('Balances', 'Withdraw', { who: signer, amount: extrinsic.fee });
    // CheckNonce writes the new nonce back unless the call is free and the account does not exist (a fresh key
    // that may only make free calls leaves no account behind).
    const nonced = readAccount(context, signer);
    const exists = nonced.providers > 0 || nonced.consumers > 0 || nonced.sufficients > 0;
    if (payment !== 'free' || exists) {
      nonced.nonce += 1;
      writeAccount(context, signer, nonced);
    }
    let failure: Record<string, unknown> | string | undefined;
    try {
      this.overlay.transactional(() => this.runtime.dispatch(context, extrinsic.extrinsic.method as never));
    } catch (error) {
      failure = this.failureOf(error);
    }
    if (chargesBalance) {
      context.deposit('TransactionPayment', 'TransactionFeePaid', {
        who: signer,
        actualFee: extrinsic.fee - extrinsic.tip,
        tip: extrinsic.tip,
      });
    }
    if (failure === undefined) context.deposit('System', 'ExtrinsicSuccess', { dispatchInfo: DISPATCH_INFO });
    else context.deposit('System', 'ExtrinsicFailed', { dispatchError: failure, dispatchInfo: DISPATCH_INFO });
    this.extrinsics.push(extrinsic.bytes);
    return undefined;
  }

  /**
   * Applies an extrinsic of a block sealed before (a replay from the base path), as a block import checks it:
   * its signature against this block's state, then nonce, the pallets' checks and the fee as `apply` does
   * (not the pool's checks: a sealed block's extrinsics are never future, and their balance is what `apply` sees).
   */
  import(bytes: Uint8Array): TransactionRejected | undefined {
    let extrinsic: CheckedExtrinsic;
    try {
      extrinsic = verifySigned(this.runtime, this.facts, this.overlay, this.number, bytes);
    } catch (error) {
      if (error instanceof TransactionRejected) return error;
      throw error;
    }
    return this.apply(extrinsic);
  }

  /**
   * The DispatchError for a failed call. An error that is not a runtime error is a devchain bug: the call
   * fails with `Other` (so the chain keeps going) and the bug is reported.
   */
  private failureOf(error: unknown): Record<string, unknown> | string {
    try {
      return this.runtime.dispatchError(error);
    } catch {
      this.onInternalError(error);
      return 'Other';
    }
  }

  finish(parentStateRoot: Uint8Array): { block: Block; changes: ReadonlyMap<Key, Uint8Array | undefined> } {
    const { registry, storage } = this.runtime;
    for (const pallet of this.runtime.palletRuntimes()) pallet.onFinalize?.(this.hookContext('Finalization'));
    // As frame_system's finalize: the hash window moves on by one block (genesis's hash stays).
    const stale = this.number - this.runtime.blockHashCount - 1;
    if (stale > 0) storage.set(this.overlay, 'System', 'BlockHash', [stale], undefined);
    const events = this.overlay.events();
    this.overlay.set(storage.key('System', 'Events'), u8aConcat(compactToU8a(events.length), ...events));
    storage.set(this.overlay, 'System', 'EventCount', [], events.length);
    const changes = this.overlay.changes();
    const changeDigest = [...changes.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([key, value]) =>
        u8aConcat(registry.hash(key as never).toU8a(), value ? registry.hash(value).toU8a() : new Uint8Array()),
      );
    const header = registry.createType<Header>('Header', {
      parentHash: this.parent.hash,
      number: this.number,
      // Not a trie root: a digest of the parent root and this block's changes, unique per state.
      stateRoot: registry.hash(u8aConcat(parentStateRoot, ...changeDigest)),
      extrinsicsRoot: registry.hash(u8aConcat(compactToU8a(this.extrinsics.length), ...this.extrinsics)),
      digest: { logs: [] },
    });
    const block: Block = {
      number: this.number,
      hash: header.hash.toHex() as Hex,
      header,
      extrinsics: this.extrinsics.map((bytes) => u8aToHex(bytes) as Hex),
      timestamp: this.timestamp,
    };
    return { block, changes };
  }
}
