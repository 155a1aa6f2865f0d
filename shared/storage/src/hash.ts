import { createHash, type Hash } from 'node:crypto';
import { base32 } from 'multiformats/bases/base32';
import { CID } from 'multiformats/cid';
import { create as createDigest } from 'multiformats/hashes/digest';

const SHA2_256 = 0x12;

/**
 * The DSNP content hash of some bytes: their sha2-256 multihash in base32 multibase ("bciq…"), as DSNP
 * announcements and ActivityContent attachments carry it.
 */
export function dsnpHashOfDigest(digest: Uint8Array): string {
  return base32.encode(createDigest(SHA2_256, digest).bytes);
}

export function dsnpHash(bytes: Uint8Array): string {
  return dsnpHashOfDigest(createHash('sha256').update(bytes).digest());
}

/** Whether a string is a DSNP content hash (base32 multibase of a sha2-256 or blake3 multihash). */
export function isDsnpHash(value: string): boolean {
  try {
    const bytes = base32.decode(value);
    return (bytes[0] === SHA2_256 || bytes[0] === 0x1e) && bytes[1] === 0x20 && bytes.length === 34;
  } catch {
    return false;
  }
}

/** Whether the text is a CID of version 1 as given (a CIDv0 `Qm…` is not). */
export function isCidV1(value: string): boolean {
  try {
    return CID.parse(value).version === 1;
  } catch {
    return false;
  }
}

/** A CID string in its canonical form (CIDv1 base32), or undefined when it does not parse. */
export function parseCid(value: string): CID | undefined {
  try {
    return CID.parse(value).toV1();
  } catch {
    return undefined;
  }
}

/** Counts and hashes bytes as they stream past, refusing more than `maxBytes`. */
export class StreamMeter {
  private readonly hash: Hash = createHash('sha256');
  size = 0;
  /** Set once the source went past the limit (an HTTP client may report the abort as its own error). */
  exceeded = false;

  constructor(private readonly maxBytes: number) {}

  /**
   * Passes a source through, measuring it; throws ContentTooLargeError past the limit, and the signal's reason at
   * the next chunk once it aborts.
   */
  async *measure(source: AsyncIterable<Uint8Array>, signal?: AbortSignal): AsyncGenerator<Uint8Array> {
    for await (const chunk of source) {
      signal?.throwIfAborted();
      this.size += chunk.byteLength;
      if (this.size > this.maxBytes) {
        this.exceeded = true;
        throw new ContentTooLargeError(this.maxBytes);
      }
      this.hash.update(chunk);
      yield chunk;
    }
  }

  dsnpHash(): string {
    return dsnpHashOfDigest(this.hash.digest());
  }
}

export class ContentTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`content is larger than ${maxBytes} bytes`);
    this.name = 'ContentTooLargeError';
  }
}
