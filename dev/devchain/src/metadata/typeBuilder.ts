import { getTypeDef, TypeDefInfo } from '@polkadot/types-create';
import type { TypeDef } from '@polkadot/types-create/types';
import { splitTopLevel, type AugmentLookup, type LookupDefinition } from './apiAugment.js';
import {
  field,
  variant,
  type SiDef,
  type SiField,
  type SiParam,
  type SiType,
  type SiVariant,
} from './portableTypes.js';

const PRIMITIVES: Record<string, string> = {
  bool: 'Bool',
  char: 'Char',
  Text: 'Str',
  str: 'Str',
  u8: 'U8',
  u16: 'U16',
  u32: 'U32',
  u64: 'U64',
  u128: 'U128',
  u256: 'U256',
  i8: 'I8',
  i16: 'I16',
  i32: 'I32',
  i64: 'I64',
  i128: 'I128',
  i256: 'I256',
};

/** Outer enums whose variants are known only once every pallet is known; they start as placeholders. */
export type OuterEnum = 'Call' | 'Event';

/** Rust field names that camelCase lost a word boundary of (between two numbers), as the real runtime names them. */
const RUST_FIELD_NAMES: Record<string, string> = {
  defaultLogo250100PngCid: 'default_logo_250_100_png_cid',
  localizedLogo250100PngCids: 'localized_logo_250_100_png_cids',
  defaultLogo250100PngBytes: 'default_logo_250_100_png_bytes',
  localizedLogo250100PngBytes: 'localized_logo_250_100_png_bytes',
};

/** camelCase → snake_case: metadata carries Rust field names, which polkadot-js camelCases again. */
export function snakeCase(name: string): string {
  const known = RUST_FIELD_NAMES[name];
  if (known !== undefined) return known;
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

const subOf = (definition: TypeDef): TypeDef => definition.sub as TypeDef;
const subsOf = (definition: TypeDef): TypeDef[] => (definition.sub as TypeDef[] | undefined) ?? [];

/**
 * Builds the portable type registry of the runtime from api-augment's named lookup types. Each named type
 * keeps the Rust path of its comment (so polkadot-js derives exactly the api-augment names), enums keep their
 * indices (unused slots are skipped but still counted), and well-known leaf types get their real paths.
 */
export class TypeBuilder {
  readonly types: SiType[] = [];
  private readonly ids = new Map<string, number>();
  private readonly outer = new Map<OuterEnum, number>();
  private readonly nameOfPath = new Map<string, string>();

  constructor(readonly lookup: AugmentLookup) {
    for (const [name, path] of Object.entries(lookup.rustPath)) this.nameOfPath.set(path.replace(/\s+/g, ''), name);
  }

  /** The id of a polkadot-js type string, building it (and what it refers to) on first use. */
  resolve(typeString: string): number {
    const key = typeString.replace(/\s+/g, '');
    const known = this.ids.get(key);
    if (known !== undefined) return known;
    const id = this.fromTypeDef(getTypeDef(key), key);
    this.ids.set(key, id);
    return id;
  }

  /** The id of an outer enum placeholder; `define` fills it in. */
  outerEnum(kind: OuterEnum): number {
    let id = this.outer.get(kind);
    if (id === undefined) {
      id = this.push([], { Tuple: [] });
      this.outer.set(kind, id);
    }
    return id;
  }

  define(id: number, path: string[], def: SiDef, params: SiParam[] = []): void {
    (this.types[id] as SiType).type = { path, params, def, docs: [] };
  }

  push(path: string[], def: SiDef, params: SiParam[] = []): number {
    const id = this.types.length;
    this.types.push({ id, type: { path, params, def, docs: [] } });
    return id;
  }

  /** The id of a lookup name when it has been built. */
  idOf(name: string): number | undefined {
    return this.ids.get(name);
  }

  private fromTypeDef(definition: TypeDef, key: string): number {
    switch (definition.info) {
      case TypeDefInfo.Plain:
        return this.plain(definition.type);
      case TypeDefInfo.Null:
        return this.resolve('()');
      case TypeDefInfo.Compact:
        return this.push([], { Compact: { type: this.resolve(subOf(definition).type) } });
      case TypeDefInfo.Vec:
        return this.push([], { Sequence: { type: this.resolve(subOf(definition).type) } });
      case TypeDefInfo.VecFixed:
        return this.push([], {
          Array: { len: definition.length as number, type: this.resolve(subOf(definition).type) },
        });
      case TypeDefInfo.Tuple:
        return this.push([], { Tuple: subsOf(definition).map((sub) => this.resolve(sub.type)) });
      case TypeDefInfo.Option: {
        const inner = this.resolve(subOf(definition).type);
        const variants = [variant('None', 0), variant('Some', 1, [field(inner)])];
        return this.push(['Option'], { Variant: { variants } }, [{ name: 'T', type: inner }]);
      }
      case TypeDefInfo.Result: {
        const [ok, error] = subsOf(definition).map((sub) => this.resolve(sub.type)) as [number, number];
        const variants = [variant('Ok', 0, [field(ok)]), variant('Err', 1, [field(error)])];
        return this.push(['Result'], { Variant: { variants } }, [
          { name: 'T', type: ok },
          { name: 'E', type: error },
        ]);
      }
      case TypeDefInfo.BTreeMap: {
        const [keyType, valueType] = subsOf(definition) as [TypeDef, TypeDef];
        const entries = this.resolve(`Vec<(${keyType.type},${valueType.type})>`);
        return this.push(['BTreeMap'], { Composite: { fields: [field(entries)] } }, [
          { name: 'K', type: this.resolve(keyType.type) },
          { name: 'V', type: this.resolve(valueType.type) },
        ]);
      }
      case TypeDefInfo.BTreeSet: {
        const item = subOf(definition);
        const entries = this.resolve(`Vec<${item.type}>`);
        return this.push(['BTreeSet'], { Composite: { fields: [field(entries)] } }, [
          { name: 'T', type: this.resolve(item.type) },
        ]);
      }
      default:
        throw new Error(`cannot build type ${key} (${TypeDefInfo[definition.info]})`);
    }
  }

  private newtype(path: string[], inner: string, typeName: string): number {
    return this.push(path, { Composite: { fields: [field(this.resolve(inner), null, typeName)] } });
  }

  private plain(name: string): number {
    if (name === '()' || name === 'Null') {
      const unit = this.ids.get('()');
      return unit ?? this.rememberAs('()', this.push([], { Tuple: [] }));
    }
    const primitive = PRIMITIVES[name];
    if (primitive) return this.push([], { Primitive: primitive });
    switch (name) {
      case 'Bytes':
      case 'OpaqueMetadata':
        return this.push([], { Sequence: { type: this.resolve('u8') } });
      // Newtypes over MessageSourceId that only runtime APIs use, so api-augment's lookup does not list them.
      case 'CommonPrimitivesMsaDelegatorId':
        return this.newtype(['common_primitives', 'msa', 'DelegatorId'], 'u64', 'MessageSourceId');
      case 'CommonPrimitivesMsaProviderId':
        return this.newtype(['common_primitives', 'msa', 'ProviderId'], 'u64', 'MessageSourceId');
      case 'Slot':
      case 'SlotDuration':
        return this.newtype(['sp_consensus_slots', name], 'u64', 'u64');
      case 'AccountId32':
        return this.newtype(['sp_core', 'crypto', 'AccountId32'], '[u8;32]', '[u8; 32]');
      case 'H256':
        return this.newtype(['primitive_types', 'H256'], '[u8;32]', '[u8; 32]');
      case 'H160':
        return this.newtype(['primitive_types', 'H160'], '[u8;20]', '[u8; 20]');
      case 'Perbill':
        return this.newtype(['sp_arithmetic', 'per_things', 'Perbill'], 'u32', 'u32');
      case 'Permill':
        return this.newtype(['sp_arithmetic', 'per_things', 'Permill'], 'u32', 'u32');
      case 'Percent':
        return this.newtype(['sp_arithmetic', 'per_things', 'Percent'], 'u8', 'u8');
      case 'Vote':
        return this.newtype(['pallet_democracy', 'vote', 'Vote'], 'u8', 'u8');
      case 'MultiAddress':
        return this.multiAddress();
      case 'Era':
        return this.era();
      case 'Call':
      case 'Event':
        return this.outerEnum(name);
      default:
        if (this.lookup.definitions[name] !== undefined) return this.named(name);
        throw new Error(`unknown type ${name}`);
    }
  }

  private rememberAs(key: string, id: number): number {
    this.ids.set(key, id);
    return id;
  }

  private multiAddress(): number {
    const accountId = this.resolve('AccountId32');
    const variants = [
      variant('Id', 0, [field(accountId, null, 'AccountId')]),
      variant('Index', 1, [field(this.resolve('Compact<()>'), null, 'AccountIndex')]),
      variant('Raw', 2, [field(this.resolve('Bytes'), null, 'Vec<u8>')]),
      variant('Address32', 3, [field(this.resolve('[u8;32]'), null, '[u8; 32]')]),
      variant('Address20', 4, [field(this.resolve('[u8;20]'), null, '[u8; 20]')]),
    ];
    return this.push(['sp_runtime', 'multiaddress', 'MultiAddress'], { Variant: { variants } }, [
      { name: 'AccountId', type: accountId },
      { name: 'AccountIndex', type: this.resolve('()') },
    ]);
  }

  private era(): number {
    const byte = this.resolve('u8');
    const variants: SiVariant[] = [variant('Immortal', 0)];
    for (let index = 1; index < 256; index++) variants.push(variant(`Mortal${index}`, index, [field(byte)]));
    return this.push(['sp_runtime', 'generic', 'era', 'Era'], { Variant: { variants } });
  }

  private fields(definition: Record<string, unknown>): SiField[] {
    const alias = (definition._alias ?? {}) as Record<string, string>;
    return Object.entries(definition)
      .filter(([name]) => name !== '_alias')
      .map(([name, type]) => field(this.resolve(type as string), alias[name] ?? snakeCase(name)));
  }

  /** A named lookup type, with the path and generic parameters of its Rust type. */
  private named(name: string): number {
    // Reserve the id first: named types may refer to themselves through their fields.
    const id = this.rememberAs(name, this.push([], { Tuple: [] }));
    const definition = this.lookup.definitions[name] as LookupDefinition;
    const rustPath = this.lookup.rustPath[name] ?? name;
    const generic = rustPath.indexOf('<');
    const path = (generic === -1 ? rustPath : rustPath.slice(0, generic)).split('::');
    const params = this.params(rustPath, name);
    this.define(id, path, this.namedDef(definition, path), params);
    return id;
  }

  private namedDef(definition: LookupDefinition, path: string[]): SiDef {
    if (typeof definition === 'string') {
      if (definition === 'Null' || getTypeDef(definition).info === TypeDefInfo.Null) {
        // typegen prints variant-less pallet enums as Null; they must stay enums for polkadot-js.
        const last = path[path.length - 1] as string;
        return /^(Call|Event|Error|HoldReason|FreezeReason)$/.test(last)
          ? { Variant: { variants: [] } }
          : { Composite: { fields: [] } };
      }
      return { Composite: { fields: [field(this.resolve(definition))] } };
    }
    if ('_set' in definition) throw new Error(`bit sets are not supported (${path.join('::')})`);
    if (!('_enum' in definition)) return { Composite: { fields: this.fields(definition) } };
    const members = definition._enum as string[] | Record<string, string | Record<string, unknown>>;
    if (Array.isArray(members)) return { Variant: { variants: members.map((name, index) => variant(name, index)) } };
    const variants: SiVariant[] = [];
    Object.entries(members).forEach(([name, type], index) => {
      if (name.startsWith('__Unused')) return;
      const fields =
        typeof type === 'string' ? (type === 'Null' ? [] : [field(this.resolve(type))]) : this.fields(type);
      variants.push(variant(name, index, fields));
    });
    return { Variant: { variants } };
  }

  /** Generic parameters from `a::B<X, c::D<Y>>`; those that resolve to a known type carry it. */
  private params(rustPath: string, lookupName: string): SiParam[] {
    const generic = rustPath.indexOf('<');
    if (generic === -1) return [];
    const args = splitTopLevel(rustPath.slice(generic + 1, rustPath.lastIndexOf('>')));
    // e.g. FrameSupportDispatchPerDispatchClassU32: the name reveals a primitive hidden behind <T>.
    const primitiveSuffix = /(U8|U16|U32|U64|U128|Bool)$/.exec(lookupName)?.[1];
    return args.map((arg, index) => {
      const bare = /^\w+$/.test(arg);
      if (primitiveSuffix && args.length === 1 && bare)
        return { name: arg, type: this.resolve(primitiveSuffix.toLowerCase()) };
      const normalised = arg.replace(/\s+/g, '');
      const named = this.nameOfPath.get(normalised);
      if (named) return { name: bare ? arg : `P${index}`, type: this.ids.get(named) ?? this.resolve(named) };
      const wellKnown: Record<string, [string, string]> = {
        'primitive_types::H256': ['H', 'H256'],
        'frequency_runtime::RuntimeEvent': ['E', 'Event'],
        'frequency_runtime::RuntimeCall': ['Call', 'Call'],
        'sp_core::crypto::AccountId32': ['AccountId', 'AccountId32'],
      };
      const known = wellKnown[normalised];
      if (known) return { name: known[0], type: this.resolve(known[1]) };
      return { name: arg, type: null };
    });
  }
}
