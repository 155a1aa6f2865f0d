import { expandMetadata, type Metadata, type TypeRegistry } from '@polkadot/types';
import type { Call } from '@polkadot/types/interfaces';
import type { Codec } from '@polkadot/types/types';
import { compactToU8a, stringCamelCase, u8aConcat } from '@polkadot/util';
import { Storage } from '../state/storage.js';
import type { RuntimeMetadata } from '../metadata/buildMetadata.js';
import type { RuntimeFacts } from '../metadata/facts.js';
import { DispatchFailure, ModuleError } from './errors.js';
import type { CallArgs, DispatchContext, PalletRuntime, ValidationContext } from './context.js';

/** A call's arguments by camelCase name (argsEntries keeps the metadata's snake_case names). */
function argsOf(call: Call): CallArgs {
  const names = call.meta.args.map((arg) => arg.name.toString());
  return Object.fromEntries(call.args.map((value, index) => [names[index] as string, value]));
}

interface PalletInfo {
  index: number;
  eventType?: number;
  errors: Map<string, number>;
}

/**
 * The devchain's runtime: the metadata-derived codecs plus the pallets that give calls their behaviour.
 * It dispatches calls, encodes events and turns thrown errors into the runtime's DispatchError.
 */
export class Runtime {
  readonly registry: TypeRegistry;
  readonly metadata: Metadata;
  readonly storage: Storage;
  readonly facts: RuntimeFacts;
  private readonly info = new Map<string, PalletInfo>();
  private readonly pallets = new Map<string, PalletRuntime>();
  private readonly tx: Record<string, Record<string, (...args: unknown[]) => Call>>;

  constructor(
    readonly built: RuntimeMetadata,
    pallets: readonly PalletRuntime[],
  ) {
    this.registry = built.registry;
    this.metadata = built.metadata;
    this.facts = built.facts;
    this.storage = new Storage(this.registry, this.metadata);
    this.tx = expandMetadata(this.registry, this.metadata).tx as unknown as typeof this.tx;
    for (const pallet of this.metadata.asV14.pallets) {
      const errors = new Map<string, number>();
      if (pallet.errors.isSome) {
        const variants = this.registry.lookup.getSiType(pallet.errors.unwrap().type).def.asVariant.variants;
        for (const variant of variants) errors.set(variant.name.toString(), variant.index.toNumber());
      }
      this.info.set(pallet.name.toString(), {
        index: pallet.index.toNumber(),
        ...(pallet.events.isSome ? { eventType: pallet.events.unwrap().type.toNumber() } : {}),
        errors,
      });
    }
    for (const pallet of pallets) this.pallets.set(pallet.name, pallet);
  }

  /** A call by section and method (camelCase, as in api.tx), with positional arguments. */
  call(section: string, method: string, ...args: unknown[]): Call {
    const make = this.tx[section]?.[method];
    if (!make) throw new Error(`no call ${section}.${method}`);
    return make(...args);
  }

  /** The SCALE bytes of a System constant, as the metadata holds them. */
  private systemConstant(name: string): Uint8Array | undefined {
    const system = this.metadata.asV14.pallets.find((pallet) => pallet.name.toString() === 'System');
    return system?.constants.find((constant) => constant.name.toString() === name)?.value.toU8a(true);
  }

  /** The runtime version, as the System.Version constant holds it. */
  version(): Codec {
    return this.registry.createType('RuntimeVersion', this.systemConstant('Version'));
  }

  private hashesKept: number | undefined;

  /** System.BlockHashCount: how many recent block hashes the state keeps (mortal transactions are born within them). */
  get blockHashCount(): number {
    this.hashesKept ??= this.registry.createType('u32', this.systemConstant('BlockHashCount')).toNumber();
    return this.hashesKept;
  }

  /** The runtime of a later release (its metadata), with the same pallets. */
  upgradedTo(built: RuntimeMetadata): Runtime {
    return new Runtime(built, this.palletRuntimes());
  }

  palletRuntimes(): PalletRuntime[] {
    return [...this.pallets.values()];
  }

  private palletInfo(pallet: string): PalletInfo {
    const info = this.info.get(pallet);
    if (!info) throw new Error(`no pallet ${pallet} in the runtime`);
    return info;
  }

  /** SCALE bytes of a RuntimeEvent: the pallet index, then the pallet's event enum. */
  encodeEvent(pallet: string, name: string, data: Record<string, unknown> | unknown[] = {}): Uint8Array {
    const info = this.palletInfo(pallet);
    if (info.eventType === undefined) throw new Error(`pallet ${pallet} has no events`);
    const event = this.registry.createType(this.registry.createLookupType(info.eventType), { [name]: data });
    if (!(event as unknown as { type: string }).type || (event as unknown as { type: string }).type !== name) {
      throw new Error(`pallet ${pallet} has no event ${name}`);
    }
    return u8aConcat([info.index], event.toU8a());
  }

  /** An EventRecord: phase, event, no topics. */
  eventRecord(phase: { ApplyExtrinsic: number } | 'Finalization' | 'Initialization', event: Uint8Array): Uint8Array {
    return u8aConcat(this.registry.createType('FrameSystemPhase', phase).toU8a(), event, compactToU8a(0));
  }

  /** The DispatchError value for something a dispatch threw. Unexpected errors propagate: they are bugs. */
  dispatchError(error: unknown): Record<string, unknown> | string {
    if (error instanceof ModuleError) {
      const info = this.palletInfo(error.pallet);
      const index = info.errors.get(error.error);
      if (index === undefined) throw new Error(`pallet ${error.pallet} has no error ${error.error}`);
      return { Module: { index: info.index, error: [index, 0, 0, 0] } };
    }
    if (error instanceof DispatchFailure) return error.dispatchError;
    throw error;
  }

  /** How a top-level call pays: tokens, Capacity (FrequencyTxPayment) or not at all (`Pays::No`). */
  payment(call: { callIndex: Uint8Array; method: string }): 'tokens' | 'capacity' | 'free' {
    const pallet = this.palletName(call.callIndex);
    if (pallet === 'FrequencyTxPayment') return 'capacity';
    return this.pallets.get(pallet)?.feeless?.includes(stringCamelCase(call.method)) ? 'free' : 'tokens';
  }

  /** Charges a non-token fee (Capacity) through the call's pallet. */
  chargeFee(context: DispatchContext, call: Call, length: number): void {
    const charge = this.pallets.get(this.palletName(call.callIndex))?.chargeFee;
    if (!charge) throw new Error(`pallet of ${call.section}.${call.method} charges no fee`);
    charge(context, call, length);
  }

  /** Runs the extension checks that apply to a top-level call. */
  validate(context: ValidationContext, call: Call): void {
    const validator = this.pallets.get(this.palletName(call.callIndex))?.validate?.[stringCamelCase(call.method)];
    validator?.(context, argsOf(call));
  }

  dispatch(context: DispatchContext, call: Call): void {
    const handler = this.pallets.get(this.palletName(call.callIndex))?.calls?.[stringCamelCase(call.method)];
    // DispatchError::Other carries no bytes on chain; the message stays in the devchain's own log.
    if (!handler) throw new DispatchFailure('Other');
    handler(context, argsOf(call));
  }

  palletName(callIndex: Uint8Array): string {
    const index = callIndex[0] as number;
    for (const [name, info] of this.info) if (info.index === index) return name;
    throw new Error(`no pallet at index ${index}`);
  }
}
