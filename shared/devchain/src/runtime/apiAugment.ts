import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * Reads the type information published in @frequency-chain/api-augment: the named lookup types (with the
 * Rust path each was generated from, kept in the file's comments) and the storage and constant listings of
 * its declaration files.
 */
const packageRoot = dirname(dirname(createRequire(import.meta.url).resolve('@frequency-chain/api-augment')));

/** A type definition as polkadot-js typegen writes it: a type string, a struct, an enum or a set. */
export type LookupDefinition = string | Record<string, unknown>;

export interface AugmentLookup {
  definitions: Record<string, LookupDefinition>;
  /** Lookup name → Rust path with generics, e.g. `pallet_msa::pallet::Call<T>`. */
  rustPath: Record<string, string>;
}

export interface AugmentStorage {
  section: string;
  name: string;
  keys: string[];
  value: string;
}

export interface AugmentConstant {
  section: string;
  name: string;
  type: string;
}

const read = (path: string) => readFileSync(join(packageRoot, path), 'utf8');

export async function loadLookup(): Promise<AugmentLookup> {
  const module = (await import(join(packageRoot, 'esm', 'interfaces', 'lookup.js'))) as {
    default: Record<string, LookupDefinition>;
  };
  const rustPath: Record<string, string> = {};
  for (const match of read('esm/interfaces/lookup.js').matchAll(/\*\s+Lookup\d+: (.+)\n\s*\*\*\/\n\s*(\w+):/g)) {
    rustPath[match[2] as string] = (match[1] as string).trim();
  }
  return { definitions: module.default, rustPath };
}

/** Splits `a, B<c, d>, (e, f)` at top-level commas. */
export function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of text) {
    if ('<([{'.includes(char)) depth++;
    if ('>)]}'.includes(char)) depth--;
    if (char === ',' && depth === 0) {
      parts.push(current.trim());
      current = '';
    } else current += char;
  }
  if (current.trim()) parts.push(current.trim());
  return parts;
}

/** Turns a TypeScript type of the declaration files into a polkadot-js type string. */
function typeString(tsType: string, u8aFixedLength: number): string {
  let text = tsType.replace(/\s+/g, '');
  for (let start = text.indexOf('ITuple<['); start !== -1; start = text.indexOf('ITuple<[')) {
    let depth = 0;
    let end = start + 'ITuple<'.length;
    for (; end < text.length; end++) {
      if ('[<('.includes(text[end] as string)) depth++;
      if ('])>'.includes(text[end] as string)) depth--;
      if (depth === 0) break;
    }
    text = `${text.slice(0, start)}(${text.slice(start + 'ITuple<['.length, end)})${text.slice(end + 2)}`;
  }
  return text.replace(/U8aFixed/g, `[u8;${u8aFixedLength}]`);
}

function sections(source: string, terminator: string): Array<[string, string]> {
  const body = source.replace(/\/\*\*[\s\S]*?\*\*\//g, '');
  const pattern = new RegExp(`\\n {8}(\\w+): \\{([\\s\\S]*?)\\[key: string\\]: ${terminator};\\s*\\};`, 'g');
  return [...body.matchAll(pattern)].map((m) => [m[1] as string, (m[2] as string).replace(/\s+/g, ' ')]);
}

export function loadStorageListing(u8aFixedLength: number): AugmentStorage[] {
  const items: AugmentStorage[] = [];
  for (const [section, body] of sections(read('interfaces/augment-api-query.d.ts'), 'QueryableStorageEntry<ApiType>')) {
    for (const item of body.matchAll(/(\w+): AugmentedQuery<ApiType, \(/g)) {
      const open = body.indexOf('=> Observable<', item.index) + '=> Observable<'.length;
      let depth = 1;
      let at = open;
      while (depth > 0) {
        const char = body[at++];
        if (char === '<') depth++;
        if (char === '>') depth--;
      }
      const value = body.slice(open, at - 1);
      const keyList = /^, \[(.*?)\]> & QueryableStorageEntry/.exec(body.slice(at))?.[1]?.trim() ?? '';
      items.push({
        section,
        name: item[1] as string,
        keys: keyList ? splitTopLevel(keyList).map((key) => typeString(key, u8aFixedLength)) : [],
        value: typeString(value, u8aFixedLength),
      });
    }
  }
  return items;
}

export function loadConstantListing(u8aFixedLength: number): AugmentConstant[] {
  const constants: AugmentConstant[] = [];
  for (const [section, body] of sections(read('interfaces/augment-api-consts.d.ts'), 'Codec')) {
    for (const match of body.matchAll(/(\w+): (.+?) & AugmentedConst<ApiType>;/g)) {
      constants.push({ section, name: match[1] as string, type: typeString(match[2] as string, u8aFixedLength) });
    }
  }
  return constants;
}
