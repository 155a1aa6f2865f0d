/**
 * The character tables of Frequency's handle rules (pallet_handles' handles-utils, runtime v2.0.1): the code
 * point ranges a canonical handle may use, the characters a base handle may not contain, and the canonical
 * words that are reserved.
 */

/** Inclusive ranges of 16-bit code units; the runtime compares `c as u16`, so astral characters wrap. */
export const ALLOWED_RANGES: readonly (readonly [number, number])[] = [
  [0x0020, 0x007a],
  [0x0080, 0x024f],
  [0x02b0, 0x04ff],
  [0x0531, 0x058a],
  [0x0591, 0x05f4],
  [0x0600, 0x07b1],
  [0x07c0, 0x07fa],
  [0x0900, 0x097f],
  [0x0981, 0x09fb],
  [0x0a01, 0x0a75],
  [0x0a81, 0x0af1],
  [0x0b01, 0x0b77],
  [0x0b82, 0x0bfa],
  [0x0c01, 0x0c7f],
  [0x0c82, 0x0cf2],
  [0x0d02, 0x0d7f],
  [0x0d82, 0x0df4],
  [0x0e01, 0x0e5b],
  [0x0e81, 0x0edd],
  [0x0f00, 0x0fda],
  [0x1000, 0x10fc],
  [0x1100, 0x137c],
  [0x1380, 0x1399],
  [0x13a0, 0x13f4],
  [0x1400, 0x167f],
  [0x1700, 0x1714],
  [0x1720, 0x1736],
  [0x1740, 0x1753],
  [0x1760, 0x1773],
  [0x1780, 0x17f9],
  [0x1800, 0x18aa],
  [0x18b0, 0x18f5],
  [0x1900, 0x1974],
  [0x1980, 0x1aad],
  [0x1b00, 0x1b7c],
  [0x1b80, 0x1bb9],
  [0x1bc0, 0x1c7f],
  [0x1e00, 0x1fff],
  [0x200c, 0x200d],
  [0x2c80, 0x2cff],
  [0x2d30, 0x2d7f],
  [0x3040, 0x30ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa500, 0xa62b],
  [0xa880, 0xa8d9],
  [0xa8e0, 0xa8fb],
  [0xa900, 0xa95f],
  [0xa980, 0xa9df],
  [0xaa00, 0xaa7b],
  [0xaa80, 0xaadf],
  [0xabc0, 0xabf9],
  [0xac00, 0xd7af],
  [0xf900, 0xfaff],
];

/** Characters a base handle may not contain (checked before canonicalization). */
export const BLOCKED_CHARACTERS: ReadonlySet<string> = new Set([...'"#%(),./:;<>@\\`{}']);

/** Canonical forms that cannot be claimed. */
export const RESERVED_CANONICAL: ReadonlySet<string> = new Set([
  'adm1n',
  'every0ne',
  'a11',
  'adm1n1strat0r',
  'm0d',
  'm0derat0r',
  'here',
  'channe1',
]);

/** Whether a code point passes the runtime's range check (on its low 16 bits, as the runtime does). */
export function isAllowedCodePoint(codePoint: number): boolean {
  const unit = codePoint & 0xffff;
  return ALLOWED_RANGES.some(([low, high]) => unit >= low && unit <= high);
}
