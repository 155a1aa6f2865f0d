import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { stringPascalCase } from '@polkadot/util';

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

/** A runtime API method as api-augment declares it (names as in the runtime: snake_case). */
export interface AugmentRuntimeMethod {
  name: string;
  params: { name: string; type: string }[];
  output: string;
}

export interface AugmentRuntimeApi {
  /** The API's name, e.g. `HandlesRuntimeApi`. */
  name: string;
  methods: AugmentRuntimeMethod[];
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

/** Splits `a, B<c, d>, (e, f)` at top-level commas (or another separator). */
export function splitTopLevel(text: string, separator = ','): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of text) {
    if ('<([{'.includes(char)) depth++;
    if ('>)]}'.includes(char)) depth--;
    if (char === separator && depth === 0) {
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

/** The index of the `>` that closes an angle bracket opened just before `from`. */
function closingAngle(text: string, from: number): number {
  let depth = 1;
  let at = from;
  for (; depth > 0; at++) {
    if (text[at] === '<') depth++;
    if (text[at] === '>') depth--;
  }
  return at - 1;
}

export function loadStorageListing(u8aFixedLength: number): AugmentStorage[] {
  const items: AugmentStorage[] = [];
  for (const [section, body] of sections(read('interfaces/augment-api-query.d.ts'), 'QueryableStorageEntry<ApiType>')) {
    for (const item of body.matchAll(/(\w+): AugmentedQuery<ApiType, \(/g)) {
      const open = body.indexOf('=> Observable<', item.index) + '=> Observable<'.length;
      const at = closingAngle(body, open) + 1;
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

/** Runtime APIs with their methods' parameter and result types (`interfaces/augment-api-runtime.d.ts`). */
export function loadRuntimeApiListing(u8aFixedLength: number): AugmentRuntimeApi[] {
  // Each API is preceded by its id in a one-line comment (`/** 0x…/ */`) that the doc-comment stripper would misread.
  const source = read('interfaces/augment-api-runtime.d.ts').replace(/\/\*\* 0x[0-9a-f]+\/ \*\//g, '');
  return sections(source, 'DecoratedCallBase<ApiType>').map(([section, body]) => {
    const methods: AugmentRuntimeMethod[] = [];
    for (const match of body.matchAll(/(\w+): AugmentedCall<ApiType, \(/g)) {
      const start = (match.index as number) + match[0].length;
      const arrow = body.indexOf(') => Observable<', start);
      const open = arrow + ') => Observable<'.length;
      const close = closingAngle(body, open);
      const paramText = body.slice(start, arrow).trim();
      const params = paramText
        ? splitTopLevel(paramText).map((param) => {
            const colon = param.indexOf(':');
            const first = splitTopLevel(param.slice(colon + 1), '|')[0] as string;
            return { name: param.slice(0, colon).trim(), type: typeString(first, u8aFixedLength) };
          })
        : [];
      methods.push({
        name: snakeName(match[1] as string),
        params,
        output: typeString(body.slice(open, close), u8aFixedLength),
      });
    }
    return { name: stringPascalCase(section), methods };
  });
}

const snakeName = (camel: string) => camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
