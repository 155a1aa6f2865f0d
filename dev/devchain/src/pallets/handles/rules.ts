import { createRequire } from 'node:module';
import { BLOCKED_CHARACTERS, RESERVED_CANONICAL, isAllowedCodePoint } from './characters.js';

const require = createRequire(import.meta.url);
const CONFUSABLES = new Map<string, string>(
  Object.entries((require('../../../runtime/handle-confusables.json') as { map: Record<string, string> }).map),
);

export const HANDLE_BYTES_MAX = 32;
export const HANDLE_CHARS_MIN = 3;
export const HANDLE_CHARS_MAX = 20;

const WHITESPACE = /\p{White_Space}/u;
const COMBINING_MARK = /\p{M}/u;
const ZERO_WIDTH_JOINERS = new Set(['\u200c', '\u200d']);

const characters = (text: string) => [...text];

/**
 * The canonical form of a base handle, as the runtime computes it: Unicode whitespace (and the zero-width
 * joiners) removed, NFKD with combining marks dropped, look-alike characters replaced, lowercased.
 */
export function canonicalize(base: string): string {
  const stripped = characters(base)
    .filter((c) => !WHITESPACE.test(c) && !ZERO_WIDTH_JOINERS.has(c))
    .join('');
  const bare = characters(stripped.normalize('NFKD'))
    .filter((c) => !COMBINING_MARK.test(c))
    .join('');
  return characters(bare)
    .map((c) => CONFUSABLES.get(c) ?? c)
    .join('')
    .toLowerCase();
}

/** Leading and trailing whitespace removed, inner runs collapsed to one space (the display form). */
export function trimAndCollapse(base: string): string {
  return base
    .split(/\p{White_Space}+/u)
    .filter((part) => part.length > 0)
    .join(' ');
}

/** "base.suffix" split at its only period; undefined when it is not exactly that. */
export function splitDisplayHandle(display: string): { base: string; suffix: number } | undefined {
  const parts = display.split('.');
  if (parts.length !== 2) return undefined;
  const [base, suffixText] = parts as [string, string];
  // Rust's u16 parse: optional '+', then decimal digits only.
  if (!/^\+?\d+$/.test(suffixText)) return undefined;
  const suffix = Number(suffixText.replace('+', ''));
  return suffix <= 0xffff ? { base, suffix } : undefined;
}

/** The Handles pallet error a base handle breaks, in the runtime's order, or undefined when it is valid. */
export type HandleProblem =
  | 'InvalidHandleByteLength'
  | 'InvalidHandleEncoding'
  | 'InvalidHandleCharacterLength'
  | 'HandleContainsBlockedCharacters'
  | 'HandleDoesNotConsistOfSupportedCharacterSets'
  | 'HandleIsNotAllowed';

const withinLength = (text: string) => {
  const count = characters(text).length;
  return count >= HANDLE_CHARS_MIN && count <= HANDLE_CHARS_MAX;
};

/** Decodes UTF-8 strictly (the runtime refuses invalid sequences). */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** The checks of the base handle itself (not the byte length), then of its canonical form. */
export function handleProblem(base: string): HandleProblem | undefined {
  if (!withinLength(base)) return 'InvalidHandleCharacterLength';
  if (characters(base).some((c) => BLOCKED_CHARACTERS.has(c))) return 'HandleContainsBlockedCharacters';
  return canonicalProblem(canonicalize(base));
}

export function canonicalProblem(canonical: string): HandleProblem | undefined {
  if (!characters(canonical).every((c) => isAllowedCodePoint(c.codePointAt(0) as number)))
    return 'HandleDoesNotConsistOfSupportedCharacterSets';
  if (RESERVED_CANONICAL.has(canonical)) return 'HandleIsNotAllowed';
  if (!withinLength(canonical)) return 'InvalidHandleCharacterLength';
  return undefined;
}

/** `handles_validateHandle`: every check claim_handle makes on the handle's text. */
export function isValidHandle(bytes: Uint8Array): boolean {
  const text = decodeUtf8(bytes);
  return text !== undefined && handleProblem(text) === undefined;
}
