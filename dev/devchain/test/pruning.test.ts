import { jest } from '@jest/globals';
import { connect, type Connected } from './support/client.js';

const KEEP = 20;

/** Seals `count` empty blocks at once (manual sealing: nothing else seals meanwhile), each finalized. */
function sealBlocks(c: Connected, count: number): void {
  for (let n = 0; n < count; n++) c.devchain.chain.seal(true);
}

describe('pruning: a devchain keeps its latest blocks (keepBlocks)', () => {
  let c: Connected;
  let archive: Connected;
  beforeAll(async () => {
    c = await connect({ sealing: 'manual', keepBlocks: KEEP });
    archive = await connect({ sealing: 'manual', keepBlocks: 'archive' });
    // polkadot-js logs every refused RPC call; here the refusals are the expected outcome.
    jest.spyOn(console, 'error').mockImplementation(() => undefined);
  });
  afterAll(async () => {
    await c?.close();
    await archive?.close();
  });

  it('forgets finalized blocks past the window, with their states; genesis stays known; the state does not grow with blocks', async () => {
    const { chain } = c.devchain;
    sealBlocks(c, 5);
    const early = chain.best.hash;
    sealBlocks(c, 95);
    sealBlocks(archive, 100);
    // Pruned a chunk at a time: the window is KEEP blocks, plus at most one chunk not pruned yet.
    expect(chain.firstKept).toBeGreaterThan(100 - 2 * KEEP);
    expect(chain.firstKept).toBeLessThanOrEqual(100 - KEEP + 1);
    expect((await c.api.rpc.chain.getBlockHash(5)).isEmpty).toBe(true);
    expect((await c.api.rpc.chain.getBlockHash(0)).toHex()).toBe(c.api.genesisHash.toHex());
    // The states kept answer (the client reads a block's parent too, so the second oldest is the oldest it can ask).
    const kept = await c.api.rpc.chain.getBlockHash(chain.firstKept + 1);
    expect((await c.api.query.system.number.at(kept)).toNumber()).toBe(chain.firstKept + 1);
    await expect(c.api.rpc.state.getStorage(c.api.query.system.number.key(), early)).rejects.toThrow(
      /State already discarded/,
    );
    await expect(c.api.rpc.state.getStorage(c.api.query.system.number.key(), c.api.genesisHash)).rejects.toThrow(
      /State already discarded/,
    );

    // A hundred blocks more, in the same phase of the pruning chunks.
    const before = { pruned: chain.state.size, archive: archive.devchain.chain.state.size };
    sealBlocks(c, 100);
    sealBlocks(archive, 100);
    const perBlock = {
      pruned: (chain.state.size - before.pruned) / 100,
      archive: (archive.devchain.chain.state.size - before.archive) / 100,
    };
    // Every block keeps one value for good, the hash System.BlockHash holds until the window of BlockHashCount
    // blocks passes it; an archive keeps every value every block writes.
    expect(perBlock.pruned).toBeLessThan(1.5);
    expect(perBlock.archive).toBeGreaterThan(5);
  });

  it('moves the System.BlockHash window as frame_system does: a transaction born before it has an ancient birth block', async () => {
    const { chain } = c.devchain;
    const window = chain.runtime.blockHashCount;
    expect(window).toBe(c.api.consts.system.blockHashCount.toNumber());
    // An even birth: a mortal era of 8192 blocks places its birth on an even block.
    sealBlocks(c, chain.best.number % 2 === 0 ? 2 : 1);
    const birth = chain.best.number;
    const birthHash = chain.best.hash;
    const bornThen = () =>
      c.api.tx.system.remark('born long ago').signAsync(c.alice, {
        era: c.api.createType('ExtrinsicEra', { current: birth, period: 8192 }),
        blockHash: birthHash,
      });
    // Its state is pruned but its hash is in the window: accepted, as by a node.
    sealBlocks(c, 3 * KEEP);
    expect(chain.firstKept).toBeGreaterThan(birth);
    const first = await bornThen();
    await c.api.rpc.author.submitExtrinsic(first);
    chain.seal(true);
    expect(chain.best.extrinsics).toContain(first.toHex());

    // The last block that still holds the hash, then the one that removes it; genesis's stays.
    sealBlocks(c, birth + window - chain.best.number);
    expect((await c.api.query.system.blockHash(birth)).toHex()).toBe(birthHash);
    sealBlocks(c, 1);
    expect((await c.api.query.system.blockHash(birth)).isEmpty).toBe(true);
    expect((await c.api.query.system.blockHash(0)).toHex()).toBe(c.api.genesisHash.toHex());
    await expect(c.api.rpc.author.submitExtrinsic(await bornThen())).rejects.toThrow(
      '1010: Invalid Transaction: Transaction has an ancient birth block',
    );
  }, 120_000);
});
