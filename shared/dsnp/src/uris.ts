import { base32 } from 'multiformats/bases/base32';

const SHA2_256 = 0x12;
const BLAKE3 = 0x1e;
const MAX_U64 = 2n ** 64n - 1n;

/** A DSNP content hash: base32 multibase of a 32-byte sha2-256 or blake3 multihash. */
export function isDsnpContentHash(value: unknown): value is string {
  if (typeof value !== 'string' || !value.startsWith('b')) return false;
  try {
    const bytes = base32.decode(value);
    return (bytes[0] === SHA2_256 || bytes[0] === BLAKE3) && bytes[1] === 0x20 && bytes.length === 34;
  } catch {
    return false;
  }
}

const isUserId = (text: string) => /^(0|[1-9]\d{0,19})$/.test(text) && BigInt(text) <= MAX_U64;

/** `dsnp://{userId}` */
export const dsnpUserUri = (userId: bigint | number | string) => `dsnp://${String(userId)}`;

/** `dsnp://{userId}/{contentHash}` */
export const dsnpContentUri = (userId: bigint | number | string, contentHash: string) =>
  `dsnp://${String(userId)}/${contentHash}`;

export function isDsnpUserUri(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith('dsnp://') && isUserId(value.slice(7));
}

/** The user id and content hash of a DSNP content URI, or undefined when it is not one. */
export function parseDsnpContentUri(value: unknown): { userId: bigint; contentHash: string } | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^dsnp:\/\/([^/]+)\/([^/]+)$/.exec(value);
  if (!match || !isUserId(match[1] as string) || !isDsnpContentHash(match[2])) return undefined;
  return { userId: BigInt(match[1] as string), contentHash: match[2] as string };
}

export const isDsnpContentUri = (value: unknown): value is string => parseDsnpContentUri(value) !== undefined;
