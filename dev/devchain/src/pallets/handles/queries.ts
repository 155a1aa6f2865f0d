import { u8aToHex, u8aToU8a } from '@polkadot/util';
import { numberOf, someOf } from '../../runtime/codecs.js';
import type { Reader } from '../msa/accounts.js';
import { canonicalize, decodeUtf8, isValidHandle, splitDisplayHandle, trimAndCollapse } from './rules.js';
import { suffixSequence } from './suffixes.js';

/** The runtime's HandleSuffixMin/Max. */
export interface SuffixRange {
  min: number;
  max: number;
}

const utf8Hex = (text: string) => u8aToHex(new TextEncoder().encode(text));

/** An MSA's stored display handle and claim expiration. */
export function readDisplayHandle(
  reader: Reader,
  msaId: number,
): { display: string | undefined; parts: ReturnType<typeof splitDisplayHandle>; expiration: number } | undefined {
  const entry = someOf<[{ toU8a(bare: boolean): Uint8Array }, { toNumber(): number }]>(
    reader.storage.get(reader.state, 'Handles', 'MSAIdToDisplayName', msaId),
  );
  if (!entry) return undefined;
  const display = decodeUtf8(entry[0].toU8a(true));
  return {
    display,
    parts: display === undefined ? undefined : splitDisplayHandle(display),
    expiration: entry[1].toNumber(),
  };
}

/** The position in its suffix sequence that the next claim of a canonical base gets (undefined: exhausted). */
export function nextSuffixIndex(reader: Reader, canonical: string, range: SuffixRange): number | undefined {
  const entry = someOf<[{ toNumber(): number }, { toNumber(): number }]>(
    reader.storage.get(reader.state, 'Handles', 'CanonicalBaseHandleToSuffixIndex', utf8Hex(canonical)),
  );
  if (!entry) return 0;
  // A change of the runtime's minimum suffix restarts the sequence.
  if (entry[1].toNumber() !== range.min) return 0;
  const next = entry[0].toNumber() + 1;
  return next > 0xffff ? undefined : next;
}

const sequences = new Map<string, number[]>();

/** The suffix at a position of a canonical base's sequence (memoized: the sequence never changes). */
export function suffixAt(canonical: string, index: number, range: SuffixRange): number | undefined {
  const key = `${range.min}:${range.max}:${canonical}`;
  let sequence = sequences.get(key);
  if (!sequence) {
    sequence = suffixSequence(canonical, range.min, range.max);
    if (sequences.size > 10_000) sequences.clear();
    sequences.set(key, sequence);
  }
  return sequence[index];
}

/** HandleResponse of an MSA: base handle as displayed, its canonical form and the suffix. */
export function handleForMsa(reader: Reader, msaId: number) {
  const stored = readDisplayHandle(reader, msaId);
  if (!stored?.parts) return undefined;
  return {
    baseHandle: stored.parts.base,
    canonicalBase: canonicalize(stored.parts.base),
    suffix: stored.parts.suffix,
  };
}

/** The MSA holding a display handle ("base.suffix"), matched through its canonical form. */
export function msaForHandle(reader: Reader, display: Uint8Array | string): number | undefined {
  const parts = splitDisplayHandle(decodeUtf8(u8aToU8a(display)) ?? '');
  if (!parts) return undefined;
  const id = someOf(
    reader.storage.get(
      reader.state,
      'Handles',
      'CanonicalBaseHandleAndSuffixToMSAId',
      utf8Hex(canonicalize(parts.base)),
      parts.suffix,
    ),
  );
  return id === undefined ? undefined : numberOf(id);
}

/** The suffixes the next `count` claims of this base would get (handles_getNextSuffixes). */
export function nextSuffixes(reader: Reader, base: Uint8Array | string, count: number, range: SuffixRange) {
  const text = decodeUtf8(u8aToU8a(base)) ?? '';
  const canonical = canonicalize(text);
  const start = nextSuffixIndex(reader, canonical, range) ?? 0;
  const suffixes: number[] = [];
  for (let index = start; index < start + count; index++) {
    const suffix = suffixAt(canonical, index, range);
    if (suffix === undefined) break;
    suffixes.push(suffix);
  }
  return { baseHandle: text, suffixes };
}

/** HandlesRuntimeApi check_handle: everything but the base handle is the default when it is invalid. */
export function checkHandle(reader: Reader, base: Uint8Array, range: SuffixRange) {
  if (!isValidHandle(base))
    return {
      baseHandle: base,
      canonicalBase: new Uint8Array(),
      suffixIndex: 0,
      suffixesAvailable: false,
      valid: false,
    };
  const text = decodeUtf8(base) as string;
  const canonical = canonicalize(text);
  const suffixIndex = nextSuffixIndex(reader, canonical, range) ?? 0;
  return {
    baseHandle: new TextEncoder().encode(trimAndCollapse(text)),
    canonicalBase: new TextEncoder().encode(canonical),
    suffixIndex,
    // The runtime compares the sequence position with the largest suffix value.
    suffixesAvailable: suffixIndex < range.max,
    valid: true,
  };
}
