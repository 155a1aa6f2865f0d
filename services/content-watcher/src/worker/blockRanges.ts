// Which blocks the scanner and a search read next: pure arithmetic over block numbers, kept apart from the
// Redis and chain calls around it so that it is tested on its own (test/blockRanges.test.ts).

/** An inclusive range of block numbers. */
export interface BlockRange {
  from: number;
  to: number;
}

/**
 * Where a scanner that never ran stands (the last block it counts as scanned): just before `startingBlock`, or
 * at the finalized head when none is configured, so that it starts with the next block.
 */
export function initialPosition(startingBlock: number | undefined, finalized: number): number {
  return Math.max(0, (startingBlock ?? finalized + 1) - 1);
}

/**
 * The position a reset moves the scanner to: `rewindOffset` blocks before `blockNumber` (the finalized head when
 * unset), never before block 1.
 */
export function positionAfterReset(reset: { blockNumber?: number; rewindOffset?: number }, finalized: number): number {
  return Math.max(1, (reset.blockNumber ?? finalized) - (reset.rewindOffset ?? 0)) - 1;
}

/** The scanner's next range after `position`: at most `maxBlocks`, never past the finalized head. */
export function nextScanRange(position: number, finalized: number, maxBlocks: number): BlockRange | undefined {
  if (position >= finalized) return undefined;
  return { from: position + 1, to: Math.min(finalized, position + maxBlocks) };
}

/**
 * The blocks a search reads: the last `blockCount` blocks up to `upperBoundBlock`, or up to the finalized head
 * when it is unset (0) or beyond it; never before block 1.
 */
export function searchWindow(search: { upperBoundBlock?: number; blockCount: number }, finalized: number): BlockRange {
  const to = Math.min(search.upperBoundBlock || finalized, finalized);
  return { from: Math.max(1, to - search.blockCount + 1), to };
}

/** `range` cut into steps of at most `step` blocks, in order. */
export function steps(range: BlockRange, step: number): BlockRange[] {
  const out: BlockRange[] = [];
  for (let from = range.from; from <= range.to; from += step)
    out.push({ from, to: Math.min(range.to, from + step - 1) });
  return out;
}
