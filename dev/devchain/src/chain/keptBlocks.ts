import type { Block } from './blockBuilder.js';

interface Kept {
  block: Block;
  stateRoot: Uint8Array;
}

/**
 * The best chain's blocks by number, each with its state root: genesis always, the others from `first` on. Pruning
 * drops the oldest (`dropBefore`); a reorganisation cuts the tail (`dropAfter`).
 */
export class KeptBlocks {
  /** Blocks `first`, `first + 1`, … up to the best (genesis first, the first pushed). */
  private readonly entries: Kept[] = [];
  private genesis: Kept | undefined;
  private firstNumber = 0;

  /** The oldest block whose state is kept (0 until something is pruned). */
  get first(): number {
    return this.firstNumber;
  }

  get best(): Kept {
    return this.entries[this.entries.length - 1] as Kept;
  }

  get(number: number): Kept | undefined {
    if (number === 0) return this.genesis;
    return number < this.firstNumber ? undefined : this.entries[number - this.firstNumber];
  }

  push(block: Block, stateRoot: Uint8Array): void {
    const kept = { block, stateRoot };
    this.genesis ??= kept;
    this.entries.push(kept);
  }

  /** Cuts the blocks above `number` off the best chain and returns them, oldest first. */
  dropAfter(number: number): Block[] {
    return this.entries.splice(number + 1 - this.firstNumber).map(({ block }) => block);
  }

  /** Forgets the blocks below `number` (never genesis, never the best) and returns them. */
  dropBefore(number: number): Block[] {
    const count = Math.min(number, this.best.block.number) - this.firstNumber;
    if (count <= 0) return [];
    this.firstNumber += count;
    return this.entries
      .splice(0, count)
      .filter((kept) => kept !== this.genesis)
      .map(({ block }) => block);
  }
}
