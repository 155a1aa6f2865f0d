import { xxhashAsU8a } from '@polkadot/util-crypto';
import { u8aConcat } from '@polkadot/util';

const MASK64 = (1n << 64n) - 1n;
const PCG_MULTIPLIER = 6364136223846793005n;
const PCG_INCREMENT = ((1442695040888963407n << 1n) | 1n) & MASK64;

/** XxHash64 (seed 0), as an unsigned 64-bit number. */
export function xxhash64(data: Uint8Array): bigint {
  const bytes = xxhashAsU8a(data, 64);
  return new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true);
}

/** The seed of a canonical base's suffix sequence: XxHash64 over its UTF-8 bytes and four zero bytes. */
export function suffixSeed(canonical: string): bigint {
  return xxhash64(u8aConcat(new TextEncoder().encode(canonical), new Uint8Array(4)));
}

/** PCG32 (XSH-RR), seeded the way oorandom's Rand32::new seeds it. */
class Pcg32 {
  private state = 0n;

  constructor(seed: bigint) {
    this.next();
    this.state = (this.state + seed) & MASK64;
    this.next();
  }

  next(): number {
    const old = this.state;
    this.state = (old * PCG_MULTIPLIER + PCG_INCREMENT) & MASK64;
    const xorShifted = Number((((old >> 18n) ^ old) >> 27n) & 0xffffffffn);
    const rotation = Number(old >> 59n);
    return ((xorShifted >>> rotation) | (xorShifted << (-rotation & 31))) >>> 0;
  }

  /** A uniform number in [start, end), by Lemire's multiply-and-reject. */
  range(start: number, end: number): number {
    const span = BigInt(end - start);
    const threshold = (2n ** 32n - span) % span;
    for (;;) {
      const product = BigInt(this.next()) * span;
      if ((product & 0xffffffffn) >= threshold || (product & 0xffffffffn) >= span) {
        return Number(product >> 32n) + start;
      }
    }
  }
}

/**
 * The order in which suffixes min..=max are handed out for a canonical base: a Fisher–Yates shuffle driven by
 * PCG32 seeded from the canonical text, so every node (and this devchain) derives the same sequence.
 */
export function suffixSequence(canonical: string, min: number, max: number): number[] {
  const rng = new Pcg32(suffixSeed(canonical));
  const indices = Array.from({ length: max - min + 1 }, (_, i) => min + i);
  const sequence: number[] = [];
  for (let i = max; i >= min; i--) {
    const j = rng.range(min, i + 1);
    const a = i - min;
    const b = j - min;
    [indices[a], indices[b]] = [indices[b] as number, indices[a] as number];
    sequence.push(indices[a] as number);
  }
  return sequence;
}
