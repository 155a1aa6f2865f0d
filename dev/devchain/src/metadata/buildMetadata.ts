import { Metadata, TypeRegistry } from '@polkadot/types';
import { stringCamelCase, stringPascalCase, u8aToHex } from '@polkadot/util';
import { blake2AsHex } from '@polkadot/util-crypto';
import { loadConstantListing, loadLookup, loadRuntimeApiListing, loadStorageListing } from './apiAugment.js';
import { devPallets, loadFacts, runtimeApiVersions, type PalletFact, type RuntimeFacts } from './facts.js';
import { field, variant, type SiVariant } from './portableTypes.js';
import { factsOf, type RuntimeRelease } from './releases.js';
import { storageItemsOf } from './storageItems.js';
import { TypeBuilder } from './typeBuilder.js';

export interface RuntimeMetadata {
  facts: RuntimeFacts;
  registry: TypeRegistry;
  metadata: Metadata;
  /** SCALE bytes of the V14 metadata (state_getMetadata). */
  v14: Uint8Array;
  /** SCALE bytes of the V15 metadata (Metadata_metadata_at_version(15)). */
  v15: Uint8Array;
  pallets: PalletFact[];
  /** Every value that came from the facts file's `guessed` section or a default, named. */
  guesses: string[];
  /** Type id of each api-augment lookup name. */
  lookupIds: Map<string, number>;
  /** The runtime APIs of the V15 metadata, with the type ids of their inputs and outputs. */
  apis: RuntimeApiMetadata[];
}

export interface RuntimeApiMetadata {
  name: string;
  methods: { name: string; inputs: { name: string; type: number }[]; output: number; docs: string[] }[];
  docs: string[];
}

interface StorageEntryJson {
  name: string;
  modifier: 'Optional' | 'Default';
  type: { Plain: number } | { Map: { hashers: string[]; key: number; value: number } };
  fallback: string;
  docs: string[];
}

interface PalletJson {
  name: string;
  index: number;
  storage: { prefix: string; items: StorageEntryJson[] } | null;
  calls: { type: number } | null;
  events: { type: number } | null;
  errors: { type: number } | null;
  constants: Array<{ name: string; type: number; value: string; docs: string[] }>;
}

/** Lookup name of a pallet's Call, Event or Error enum, found by the crate of its Rust path. */
function palletEnum(builder: TypeBuilder, pallet: PalletFact, kind: 'Call' | 'Event' | 'Error'): string | undefined {
  return Object.entries(builder.lookup.rustPath).find(([, rustPath]) => {
    const path = (rustPath.split('<')[0] as string).split('::');
    return path[0] === pallet.crate && path[path.length - 1] === kind && path.length <= 3;
  })?.[0];
}

/**
 * Constants whose name in the runtime is not the PascalCase of api-augment's camelCase one (each pallet declares
 * it so), as the real runtime's metadata shows them.
 */
const CONSTANT_NAMES: Record<string, string> = {
  'System.ss58Prefix': 'SS58Prefix',
  'Utility.batchedCallsLimit': 'batched_calls_limit',
  'CollatorSelection.potAccount': 'pot_account',
};

function constantValue(facts: RuntimeFacts, pallet: string, name: string): { value?: unknown; guessed: boolean } {
  if (pallet === 'System' && name === 'version') {
    const apis = runtimeApiVersions(facts).map(([api, version]) => [blake2AsHex(api, 64), version]);
    return { value: { ...facts.runtimeVersion, apis }, guessed: false };
  }
  const recorded = facts.constants[pallet]?.[name];
  if (recorded && recorded.value !== null && recorded.value !== undefined)
    return { value: recorded.value, guessed: false };
  const guessed = facts.guessed.constants[pallet]?.[name];
  return guessed ? { value: guessed.value, guessed: true } : { guessed: true };
}

/**
 * Synthesizes the runtime metadata of a standalone Frequency development node (spec 189) from api-augment's
 * types and the runtime facts: pallets at their real indices, calls, events, errors, storage with hashers and
 * defaults, constants with values, and the extrinsic format with its transaction extensions in runtime order.
 * With `release`, the metadata of that later release (see releases.ts).
 */
export async function buildMetadata(release?: RuntimeRelease): Promise<RuntimeMetadata> {
  const facts = factsOf(loadFacts(), release);
  const lookup = await loadLookup();
  const builder = new TypeBuilder(release ? release.lookup(lookup) : lookup);
  const fixedLength = facts.guessed.u8aFixedLength.value;
  const storageListing = loadStorageListing(fixedLength);
  const constantListing = loadConstantListing(fixedLength);
  const guesses: string[] = [];
  const pallets = devPallets(facts);

  const callVariants: SiVariant[] = [];
  const eventVariants: SiVariant[] = [];
  const storageDefaults = new Map<StorageEntryJson, { value: number; default?: unknown }>();
  const constantSources = new Map<PalletJson['constants'][number], string>();
  const palletJson: PalletJson[] = pallets.map((pallet) => {
    const [call, event, error] = (['Call', 'Event', 'Error'] as const).map((kind) => {
      const name = palletEnum(builder, pallet, kind);
      return name === undefined ? undefined : builder.resolve(name);
    });
    if (call !== undefined)
      callVariants.push(variant(pallet.name, pallet.index, [field(call, null, `${pallet.crate}::Call<Runtime>`)]));
    if (event !== undefined)
      eventVariants.push(variant(pallet.name, pallet.index, [field(event, null, `${pallet.crate}::Event<Runtime>`)]));
    const section = stringCamelCase(pallet.name);
    const listing = storageListing.filter((item) => item.section === section);
    const items = storageItemsOf(facts, pallet, listing, guesses).map((item) => {
      const value = builder.resolve(item.value);
      const key =
        item.keys.length === 1 ? builder.resolve(item.keys[0] as string) : builder.resolve(`(${item.keys.join(',')})`);
      const entry: StorageEntryJson = {
        name: item.name,
        modifier: item.modifier,
        type: item.keys.length === 0 ? { Plain: value } : { Map: { hashers: item.hashers, key, value } },
        fallback: '0x00',
        docs: [],
      };
      storageDefaults.set(entry, { value, ...(item.default === undefined ? {} : { default: item.default }) });
      return entry;
    });
    const constants = constantListing
      .filter((constant) => constant.section === section)
      .map((constant) => {
        const entry = {
          name: CONSTANT_NAMES[`${pallet.name}.${constant.name}`] ?? stringPascalCase(constant.name),
          type: builder.resolve(constant.type),
          value: '0x',
          docs: [],
        };
        constantSources.set(entry, constant.name);
        return entry;
      });
    return {
      name: pallet.name,
      index: pallet.index,
      storage: items.length > 0 ? { prefix: pallet.name, items } : null,
      calls: call === undefined ? null : { type: call },
      events: event === undefined ? null : { type: event },
      errors: error === undefined ? null : { type: error },
      constants,
    };
  });

  // Every named type, including those only runtime APIs use, so registry.createType('<LookupName>') works.
  for (const name of Object.keys(builder.lookup.definitions)) builder.resolve(name);
  builder.define(builder.outerEnum('Call'), ['frequency_runtime', 'RuntimeCall'], {
    Variant: { variants: callVariants },
  });
  builder.define(builder.outerEnum('Event'), ['frequency_runtime', 'RuntimeEvent'], {
    Variant: { variants: eventVariants },
  });

  const unit = builder.resolve('()');
  const extrinsicType = builder.push(
    ['sp_runtime', 'generic', 'unchecked_extrinsic', 'UncheckedExtrinsic'],
    { Composite: { fields: [field(builder.resolve('Bytes'), null, 'Vec<u8>')] } },
    [
      { name: 'Address', type: builder.resolve('MultiAddress') },
      { name: 'Call', type: builder.outerEnum('Call') },
      { name: 'Signature', type: builder.resolve('CommonPrimitivesSignaturesUnifiedSignature') },
      { name: 'Extra', type: unit },
    ],
  );
  const signedExtensions = [...facts.transactionExtensions]
    .sort((a, b) => a.position - b.position)
    .map((extension) => ({
      identifier: extension.identifier,
      type: extension.lookupType ? builder.resolve(extension.lookupType) : unit,
      additionalSigned: builder.resolve(extension.implicit),
    }));
  guesses.push('extension StorageWeightReclaim listed last (carries no bytes, so signing is unaffected)');
  const runtimeType = builder.resolve('FrequencyRuntimeRuntime');
  const apis = runtimeApisOf(facts, builder, extrinsicType, fixedLength);

  const document = () => ({
    magicNumber: 0x6174656d,
    metadata: {
      v14: {
        lookup: { types: builder.types },
        pallets: palletJson,
        extrinsic: { type: extrinsicType, version: 4, signedExtensions },
        type: runtimeType,
      },
    },
  });

  // First pass: a registry over the types alone, to encode storage defaults and constant values.
  // Extensions that carry no bytes need no definition, but polkadot-js warns about any it does not know.
  const noData = facts.transactionExtensions.filter((e) => e.explicit === '()' && e.implicit === '()');
  const userExtensions = Object.fromEntries(noData.map((e) => [e.identifier, { extrinsic: {}, payload: {} }]));
  const draft = new TypeRegistry();
  draft.setMetadata(new Metadata(draft, document()), undefined, userExtensions, true);
  const encode = (type: number, value?: unknown) =>
    u8aToHex(draft.createType(draft.createLookupType(type), value).toU8a());
  for (const [entry, { value, default: fallback }] of storageDefaults) {
    entry.fallback = entry.modifier === 'Optional' ? '0x00' : encode(value, fallback);
  }
  for (const pallet of palletJson) {
    for (const constant of pallet.constants) {
      const source = constantValue(facts, pallet.name, constantSources.get(constant) as string);
      if (source.guessed)
        guesses.push(
          `constant ${pallet.name}.${constant.name}: ${source.value === undefined ? 'type default' : 'guessed'}`,
        );
      constant.value = encode(constant.type, source.value);
    }
  }

  const registry = new TypeRegistry();
  const metadata = new Metadata(registry, document());
  registry.setMetadata(metadata, undefined, userExtensions, true);
  // V15 is polkadot-js' own conversion of V14, rebuilt from JSON (the codec instance mis-encodes pallets).
  const v15 = new Metadata(registry, {
    magicNumber: 0x6174656d,
    metadata: { v15: { ...metadata.asV15.toJSON(), apis } },
  });
  const lookupIds = new Map(
    Object.keys(builder.lookup.definitions).map((name) => [name, builder.idOf(name) as number]),
  );
  return { facts, registry, metadata, v14: metadata.toU8a(), v15: v15.toU8a(), pallets, guesses, lookupIds, apis };
}

/**
 * The V15 `apis` section: every runtime API of the development node with its methods in the runtime's order,
 * typed from api-augment's declarations. With it, `api.call.<api>.<method>` exists on clients.
 */
function runtimeApisOf(
  facts: RuntimeFacts,
  builder: TypeBuilder,
  extrinsicType: number,
  fixedLength: number,
): RuntimeApiMetadata[] {
  const listing = new Map(loadRuntimeApiListing(fixedLength).map((api) => [api.name, api]));
  const typeOf = (type: string) => (type === 'Extrinsic' ? extrinsicType : builder.resolve(type));
  return runtimeApiVersions(facts).map(([name]) => {
    const declared = listing.get(name);
    const fact = facts.runtimeApis.find((api) => api.name === name);
    if (!declared || !fact) throw new Error(`runtime API ${name} is not declared by api-augment`);
    const methods = fact.methods.map((methodName) => {
      const method = declared.methods.find((m) => m.name === methodName);
      if (!method) throw new Error(`runtime API method ${name}.${methodName} is not declared by api-augment`);
      return {
        name: method.name,
        inputs: method.params.map((param) => ({ name: param.name, type: typeOf(param.type) })),
        output: typeOf(method.output),
        docs: [],
      };
    });
    return { name, methods, docs: [] };
  });
}
