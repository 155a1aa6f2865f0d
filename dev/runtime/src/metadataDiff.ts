import type { Metadata } from '@polkadot/types';
import type { SiField, SiLookupTypeId, SiVariant } from '@polkadot/types/interfaces';
import type { PortableRegistry } from '@polkadot/types/metadata';

/**
 * How two runtimes' metadata differ in what a client of the chain relies on: pallets and their indices, calls,
 * events and errors (names, indices, fields and their type names), storage items (modifier, hashers, key and value
 * types), constants (their bytes), the transaction extensions and the runtime APIs. Each difference is one line,
 * `<where>: <expected> ≠ <actual>`, expected being the first metadata's (the real runtime's). Both are read as V15.
 */
export function metadataDifferences(expected: Metadata, actual: Metadata): string[] {
  const a = expected.asV15;
  const b = actual.asV15;
  const differences: string[] = [];
  const compare = (where: string, left: unknown, right: unknown) => {
    const l = JSON.stringify(left);
    const r = JSON.stringify(right);
    if (l !== r) differences.push(`${where}: ${l} ≠ ${r}`);
  };
  /**
   * A type as its encoding sees it, to `depth` levels of structs and enums: a struct of one field is that field
   * (newtypes such as ProviderId(u64), and BoundedVec, encode as what they wrap), names of generic parameters
   * and paths are left out, and an enum or struct past the depth is named by the last segment of its path.
   */
  const typeName = (lookup: PortableRegistry, id: SiLookupTypeId, depth = 2): string => {
    const type = lookup.getSiType(id);
    const def = type.def;
    const named = () => type.path.map(String).at(-1) ?? def.type;
    if (def.isComposite) {
      const fields = def.asComposite.fields;
      if (fields.length === 1) return typeName(lookup, (fields[0] as SiField).type, depth);
      if (depth === 0) return named();
      // A tuple struct (unnamed fields) encodes as a tuple.
      if (fields.every((field: SiField) => field.name.isNone))
        return `(${fields.map((field: SiField) => typeName(lookup, field.type, depth - 1)).join(', ')})`;
      return `{${fields.map((field: SiField) => `${field.name.toString()}: ${typeName(lookup, field.type, depth - 1)}`).join(', ')}}`;
    }
    if (def.isVariant) {
      if (depth === 0) return named();
      const cases = def.asVariant.variants
        .filter((v: SiVariant) => !v.name.toString().startsWith('__Unused'))
        .sort((x: SiVariant, y: SiVariant) => x.index.toNumber() - y.index.toNumber())
        .map((v: SiVariant) => `${v.name.toString()}=${v.index.toNumber()}${fieldsShape(lookup, v.fields, depth - 1)}`);
      return `enum{${cases.join(' | ')}}`;
    }
    if (def.isPrimitive) return def.asPrimitive.toString().toLowerCase();
    if (def.isCompact) return `Compact<${typeName(lookup, def.asCompact.type, depth)}>`;
    if (def.isSequence) return `Vec<${typeName(lookup, def.asSequence.type, depth)}>`;
    if (def.isArray) return `[${typeName(lookup, def.asArray.type, depth)}; ${def.asArray.len.toNumber()}]`;
    if (def.isTuple)
      return `(${def.asTuple.map((inner: SiLookupTypeId) => typeName(lookup, inner, depth)).join(', ')})`;
    if (def.isBitSequence) return 'BitVec';
    return def.type;
  };
  /** A variant's fields; one field that is a tuple encodes as the tuple's elements would. */
  const fieldsShape = (lookup: PortableRegistry, fields: SiField[], depth: number): string => {
    const only = fields.length === 1 ? lookup.getSiType((fields[0] as SiField).type).def : undefined;
    if (only?.isTuple) return typeName(lookup, (fields[0] as SiField).type, depth);
    return `(${fields.map((field) => typeName(lookup, field.type, depth)).join(', ')})`;
  };
  const variants = (lookup: PortableRegistry, id: SiLookupTypeId | undefined): Map<string, unknown> => {
    if (id === undefined) return new Map();
    const def = lookup.getSiType(id).def;
    if (!def.isVariant) return new Map();
    return new Map(
      def.asVariant.variants.map((variant: SiVariant) => [
        variant.name.toString(),
        {
          index: variant.index.toNumber(),
          fields: variant.fields.map((field: SiField) => [field.name.toString(), typeName(lookup, field.type)]),
        },
      ]),
    );
  };
  const compareMaps = (where: string, left: Map<string, unknown>, right: Map<string, unknown>) => {
    for (const [name, value] of left) {
      if (!right.has(name)) differences.push(`${where}.${name}: present ≠ missing`);
      else compare(`${where}.${name}`, value, right.get(name));
    }
    for (const name of right.keys()) if (!left.has(name)) differences.push(`${where}.${name}: missing ≠ present`);
  };

  const palletsOf = (metadata: typeof a) => new Map(metadata.pallets.map((pallet) => [pallet.name.toString(), pallet]));
  const pa = palletsOf(a);
  const pb = palletsOf(b);
  compareMaps(
    'pallet',
    new Map([...pa].map(([name, pallet]) => [name, pallet.index.toNumber()])),
    new Map([...pb].map(([name, pallet]) => [name, pallet.index.toNumber()])),
  );
  for (const [name, left] of pa) {
    const right = pb.get(name);
    if (right === undefined) continue;
    for (const kind of ['calls', 'events', 'errors'] as const) {
      const l = left[kind];
      const r = right[kind];
      compareMaps(
        `${name}.${kind}`,
        variants(a.lookup, l.isSome ? l.unwrap().type : undefined),
        variants(b.lookup, r.isSome ? r.unwrap().type : undefined),
      );
    }
    const storage = (metadata: typeof a, pallet: typeof left) =>
      new Map(
        (pallet.storage.isSome ? pallet.storage.unwrap().items : []).map((item) => {
          const type = item.type;
          const shape = type.isPlain
            ? { value: typeName(metadata.lookup, type.asPlain) }
            : {
                hashers: type.asMap.hashers.map(String),
                key: typeName(metadata.lookup, type.asMap.key),
                value: typeName(metadata.lookup, type.asMap.value),
              };
          return [item.name.toString(), { modifier: item.modifier.toString(), ...shape }];
        }),
      );
    compareMaps(`${name}.storage`, storage(a, left), storage(b, right));
    const constants = (pallet: typeof left) =>
      new Map(pallet.constants.map((constant) => [constant.name.toString(), constant.value.toHex()]));
    compareMaps(`${name}.constants`, constants(left), constants(right));
  }
  const extensions = (metadata: typeof a) =>
    metadata.extrinsic.signedExtensions.map((extension) => extension.identifier.toString());
  compare('extrinsic.extensions', extensions(a), extensions(b));
  const apiMethods = (metadata: typeof a) =>
    new Map(
      metadata.apis.flatMap((api) =>
        api.methods.map((method) => [
          `${api.name.toString()}.${method.name.toString()}`,
          {
            inputs: method.inputs.map((input) => [input.name.toString(), typeName(metadata.lookup, input.type)]),
            output: typeName(metadata.lookup, method.output),
          },
        ]),
      ),
    );
  compareMaps('api', apiMethods(a), apiMethods(b));
  return differences;
}
