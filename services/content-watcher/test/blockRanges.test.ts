import { initialPosition, nextScanRange, positionAfterReset, searchWindow, steps } from '../src/worker/blockRanges.js';

// The scanner's and the searches' block arithmetic, without Redis or a chain: milliseconds.

describe('the scanner', () => {
  it('starts just before its starting block, or at the finalized head without one', () => {
    expect(initialPosition(1, 500)).toBe(0);
    expect(initialPosition(120, 500)).toBe(119);
    expect(initialPosition(undefined, 500)).toBe(500);
    expect(initialPosition(0, 500)).toBe(0);
  });

  it('reads at most maxBlocks after its position, never past the finalized head, nothing when caught up', () => {
    expect(nextScanRange(0, 500, 100)).toEqual({ from: 1, to: 100 });
    expect(nextScanRange(450, 500, 100)).toEqual({ from: 451, to: 500 });
    expect(nextScanRange(499, 500, 100)).toEqual({ from: 500, to: 500 });
    expect(nextScanRange(500, 500, 100)).toBeUndefined();
    // A position ahead of the head (a reset to a block not yet final) waits for it.
    expect(nextScanRange(600, 500, 100)).toBeUndefined();
  });

  it('covers every block once across steps', () => {
    const read: number[] = [];
    for (let position = 0, range; (range = nextScanRange(position, 1234, 100)); position = range.to)
      for (let block = range.from; block <= range.to; block++) read.push(block);
    expect(read).toEqual(Array.from({ length: 1234 }, (_, i) => i + 1));
  });

  it('after a reset scans from the block asked for, rewound by the offset, never before block 1', () => {
    expect(positionAfterReset({ blockNumber: 100 }, 500)).toBe(99);
    expect(positionAfterReset({ blockNumber: 100, rewindOffset: 10 }, 500)).toBe(89);
    expect(positionAfterReset({ rewindOffset: 10 }, 500)).toBe(489);
    expect(positionAfterReset({}, 500)).toBe(499);
    expect(positionAfterReset({ blockNumber: 5, rewindOffset: 50 }, 500)).toBe(0);
  });
});

describe('a search', () => {
  it('reads the last blockCount blocks up to its upper bound, or to the finalized head', () => {
    expect(searchWindow({ blockCount: 10 }, 500)).toEqual({ from: 491, to: 500 });
    expect(searchWindow({ blockCount: 10, upperBoundBlock: 0 }, 500)).toEqual({ from: 491, to: 500 });
    expect(searchWindow({ blockCount: 10, upperBoundBlock: 200 }, 500)).toEqual({ from: 191, to: 200 });
    // An upper bound beyond the head is the head: nothing is read that is not final.
    expect(searchWindow({ blockCount: 10, upperBoundBlock: 900 }, 500)).toEqual({ from: 491, to: 500 });
    expect(searchWindow({ blockCount: 1000, upperBoundBlock: 200 }, 500)).toEqual({ from: 1, to: 200 });
  });

  it('reads its window in steps, in order, each block once', () => {
    expect(steps({ from: 1, to: 2500 }, 1000)).toEqual([
      { from: 1, to: 1000 },
      { from: 1001, to: 2000 },
      { from: 2001, to: 2500 },
    ]);
    expect(steps({ from: 7, to: 7 }, 1000)).toEqual([{ from: 7, to: 7 }]);
    // A search resumed past its last block has nothing left.
    expect(steps({ from: 2501, to: 2500 }, 1000)).toEqual([]);
  });
});
