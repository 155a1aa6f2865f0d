// A live network's reorganisations, on call: the unfinalized tail of the best chain replaced by a longer branch,
// the retracted transactions re-included or dropped, finalized blocks never touched.
import { holdsFor, waitUntil } from '@frequency-gateway/devstack';
import { jest } from '@jest/globals';
import type { Header } from '@polkadot/types/interfaces';
import { devchainControl, startDevchain } from '../src/index.js';
import type { Reorganization } from '../src/chain/chain.js';
import { connect, submit, type Connected } from './support/client.js';

const UNIT = 100_000_000n;

/** Manual sealing with a finality lag: blocks only when asked, the last three never finalized. */
const MANUAL = { sealing: 'manual', finalityLag: 3 } as const;

const seal = (c: Connected, count = 1) =>
  (async () => {
    for (let n = 0; n < count; n++) await c.devchain.chain.command({ createEmpty: true, finalize: true });
  })();

/** Every head a subscription delivers, number and hash. */
async function heads(subscribe: (callback: (header: Header) => void) => Promise<() => void>) {
  const seen: Array<{ number: number; hash: string }> = [];
  const stop = await subscribe((header) => seen.push({ number: header.number.toNumber(), hash: header.hash.toHex() }));
  return { seen, stop };
}

/** A transfer from Alice to Bob, watched: every status with the block it names. */
async function watchedTransfer(c: Connected, amount: bigint) {
  const statuses: Array<{ type: string; block?: string }> = [];
  const unsubscribe = await c.api.tx.balances
    .transferKeepAlive(c.bob.address, amount)
    .signAndSend(c.alice, (result) => {
      const { status } = result;
      const block = status.isInBlock
        ? status.asInBlock
        : status.isRetracted
          ? status.asRetracted
          : status.isFinalized
            ? status.asFinalized
            : undefined;
      statuses.push({ type: status.type, ...(block ? { block: block.toHex() } : {}) });
    });
  return { statuses, types: () => statuses.map((s) => s.type), unsubscribe };
}

const free = async (c: Connected, address: string) => (await c.api.query.system.account(address)).data.free.toBigInt();
const nextIndex = async (c: Connected, address: string) =>
  (await c.api.rpc.system.accountNextIndex(address)).toNumber();

describe('a reorganisation on call (dev_reorg)', () => {
  let c: Connected;
  beforeEach(async () => (c = await connect(MANUAL)));
  afterEach(async () => c.close());

  it('replaces the best blocks by a longer branch; the finalized head and the blocks below stay', async () => {
    await seal(c, 5);
    const { chain } = c.devchain;
    expect([chain.best.number, chain.finalized.number]).toEqual([5, 2]);
    const before = await Promise.all(
      [0, 1, 2, 3, 4, 5].map(async (n) => (await c.api.rpc.chain.getBlockHash(n)).toHex()),
    );
    const finalized = (await c.api.rpc.chain.getFinalizedHead()).toHex();
    const bobKey = c.api.query.system.account.key(c.bob.address);

    const answer = await devchainControl(c.devchain.url).reorg(2);
    expect(answer.retracted).toEqual(before.slice(4));
    expect(answer.enacted).toHaveLength(3);
    expect(answer.best).toBe(answer.enacted[2]);

    const after = await Promise.all(
      [0, 1, 2, 3, 4, 5, 6].map(async (n) => (await c.api.rpc.chain.getBlockHash(n)).toHex()),
    );
    expect(after.slice(0, 4)).toEqual(before.slice(0, 4));
    expect(after.slice(4)).toEqual(answer.enacted);
    expect(after[4]).not.toBe(before[4]);
    expect(after[5]).not.toBe(before[5]);
    expect((await c.api.rpc.chain.getHeader()).hash.toHex()).toBe(answer.best);
    expect((await c.api.rpc.chain.getHeader(after[4])).parentHash.toHex()).toBe(before[3]);
    expect((await c.api.rpc.chain.getFinalizedHead()).toHex()).toBe(finalized);

    // The retracted blocks are still served by hash; their state is discarded.
    const retracted = await c.api.rpc.chain.getHeader(before[5]);
    expect(retracted.number.toNumber()).toBe(5);
    expect((await c.api.rpc.chain.getBlock(before[4])).block.header.number.toNumber()).toBe(4);
    // polkadot-js logs every failed call; this failure is the point.
    const logged = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      await expect(c.api.rpc.state.getStorage(bobKey, before[5])).rejects.toThrow('State already discarded');
    } finally {
      logged.mockRestore();
    }
    // The new best block has its state, and sealing goes on from it.
    expect(await c.api.rpc.state.getStorage(bobKey, answer.best)).toBeDefined();
    await seal(c);
    expect((await c.api.rpc.chain.getHeader()).parentHash.toHex()).toBe(answer.best);
  });

  it('refuses to reach a finalized block, a depth out of 1–3, and finalizing a retracted block', async () => {
    await seal(c, 5);
    const control = devchainControl(c.devchain.url);
    await c.api.rpc.engine.finalizeBlock((await c.api.rpc.chain.getBlockHash(4)).toHex());
    await expect(control.reorg(2)).rejects.toThrow(
      'a reorganisation of depth 2 from best block #5 would retract finalized block #4',
    );
    await expect(control.reorg(4)).rejects.toThrow('depth must be an integer from 1 to 3');
    await expect(control.reorg(0)).rejects.toThrow('depth must be an integer from 1 to 3');
    expect(c.devchain.chain.best.number).toBe(5);

    const { retracted } = await control.reorg(1);
    expect(c.devchain.chain.best.number).toBe(6);
    const logged = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      await expect(c.api.rpc.engine.finalizeBlock(retracted[0] as string)).rejects.toThrow('retracted');
    } finally {
      logged.mockRestore();
    }
    expect(c.devchain.chain.finalized.number).toBe(4);
  });

  it('re-includes a retracted transfer: Retracted, then InBlock of the new block, then Finalized, applied once', async () => {
    await seal(c);
    const bobBefore = await free(c, c.bob.address);
    const nonceBefore = await nextIndex(c, c.alice.address);
    const transfer = await watchedTransfer(c, 3n * UNIT);
    await waitUntil(async () => transfer.types().includes('Ready'), 10_000, 'the transfer ready');
    await seal(c, 2);
    await waitUntil(async () => transfer.types().includes('InBlock'), 10_000, 'the transfer in block #2');
    const included = transfer.statuses.find((s) => s.type === 'InBlock')?.block;
    expect(included).toBe(c.devchain.chain.blockByNumber(2)?.hash);

    const answer = await devchainControl(c.devchain.url).reorg(2);
    expect(answer.retracted[0]).toBe(included);
    await waitUntil(async () => transfer.types().length >= 4, 10_000, 'the transfer in the new branch');
    expect(transfer.statuses.slice(2)).toEqual([
      { type: 'Retracted', block: included },
      { type: 'InBlock', block: answer.enacted[0] },
    ]);

    await seal(c, 3);
    await waitUntil(async () => transfer.types().includes('Finalized'), 10_000, 'the transfer finalized');
    expect(transfer.types()).toEqual(['Ready', 'InBlock', 'Retracted', 'InBlock', 'Finalized']);
    expect(transfer.statuses[4]?.block).toBe(answer.enacted[0]);
    expect(await free(c, c.bob.address)).toBe(bobBefore + 3n * UNIT);
    expect(await nextIndex(c, c.alice.address)).toBe(nonceBefore + 1);
    expect((await c.api.rpc.author.pendingExtrinsics()).length).toBe(0);
  });

  it('with dropRetracted, the retracted transfer is Dropped and never applied', async () => {
    const bobBefore = await free(c, c.bob.address);
    const nonceBefore = await nextIndex(c, c.alice.address);
    const transfer = await watchedTransfer(c, 5n * UNIT);
    await waitUntil(async () => transfer.types().includes('Ready'), 10_000, 'the transfer ready');
    await seal(c);
    await waitUntil(async () => transfer.types().includes('InBlock'), 10_000, 'the transfer in block #1');
    expect(await free(c, c.bob.address)).toBe(bobBefore + 5n * UNIT);

    const answer = await devchainControl(c.devchain.url).reorg(1, { dropRetracted: true });
    await waitUntil(async () => transfer.types().includes('Dropped'), 10_000, 'the transfer dropped');
    expect(transfer.statuses).toEqual([
      { type: 'Ready' },
      { type: 'InBlock', block: answer.retracted[0] },
      { type: 'Retracted', block: answer.retracted[0] },
      { type: 'Dropped' },
    ]);
    await seal(c, 4);
    expect(await free(c, c.bob.address)).toBe(bobBefore);
    expect(await nextIndex(c, c.alice.address)).toBe(nonceBefore);
    expect((await c.api.rpc.author.pendingExtrinsics()).length).toBe(0);
    for (const hash of answer.enacted) expect(c.devchain.chain.blockByHash(hash)?.extrinsics).toHaveLength(1);
  });

  it('a retracted transfer whose mortal era was born in a retracted block is Invalid', async () => {
    await seal(c, 2);
    const birth = c.devchain.chain.best;
    const era = c.api.createType('ExtrinsicEra', { current: birth.number, period: 4 });
    const statuses: string[] = [];
    await c.api.tx.balances
      .transferKeepAlive(c.bob.address, UNIT)
      .signAndSend(c.alice, { blockHash: birth.hash, era }, (result) => void statuses.push(result.status.type));
    await waitUntil(async () => statuses.includes('Ready'), 10_000, 'the transfer ready');
    await seal(c);
    await waitUntil(async () => statuses.includes('InBlock'), 10_000, 'the transfer in block #3');

    await devchainControl(c.devchain.url).reorg(2);
    await waitUntil(async () => statuses.includes('Invalid'), 10_000, 'the transfer invalid');
    expect(statuses).toEqual(['Ready', 'InBlock', 'Retracted', 'Invalid']);
    expect(await nextIndex(c, c.alice.address)).toBe(0);
    expect((await c.api.rpc.author.pendingExtrinsics()).length).toBe(0);
  });

  it('sends the new branch on new and all heads subscriptions; finalized heads never go back', async () => {
    const newHeads = await heads((callback) => c.api.rpc.chain.subscribeNewHeads(callback));
    const allHeads = await heads((callback) => c.api.rpc.chain.subscribeAllHeads(callback));
    const finalizedHeads = await heads((callback) => c.api.rpc.chain.subscribeFinalizedHeads(callback));
    await seal(c, 5);
    await waitUntil(async () => newHeads.seen.some((h) => h.number === 5), 10_000, 'block #5 on new heads');

    const answer = await devchainControl(c.devchain.url).reorg(3);
    const enacted = answer.enacted.map((hash, index) => ({ number: 3 + index, hash }));
    for (const [name, subscription] of Object.entries({ newHeads, allHeads }))
      await waitUntil(
        async () => JSON.stringify(subscription.seen.slice(-4)) === JSON.stringify(enacted),
        10_000,
        () => `the new branch on ${name}: ${JSON.stringify(subscription.seen.slice(-5))}`,
      );
    await seal(c, 2);
    await waitUntil(async () => finalizedHeads.seen.some((h) => h.number === 5), 10_000, 'block #5 finalized');
    await holdsFor(200, () => {
      const numbers = finalizedHeads.seen.map((h) => h.number);
      expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
      expect(finalizedHeads.seen.filter((h) => answer.retracted.includes(h.hash))).toEqual([]);
    });
    expect(finalizedHeads.seen.find((h) => h.number === 3)?.hash).toBe(answer.enacted[0]);
    newHeads.stop();
    allHeads.stop();
    finalizedHeads.stop();
  });
});

describe('reorganisations every N blocks (reorgEvery)', () => {
  let c: Connected;
  const reorgs: Reorganization[] = [];
  beforeAll(async () => {
    c = await connect({ sealing: 'interval', blockTimeMs: 60, finalityLag: 3, reorgEvery: 3, reorgDepth: 2 });
    c.devchain.chain.on('reorg', (reorg) => reorgs.push(reorg));
  });
  afterAll(async () => c.close());

  it('reorganises the best chain by that depth as blocks are sealed; transfers still land once', async () => {
    const newHeads = await heads((callback) => c.api.rpc.chain.subscribeNewHeads(callback));
    const bobBefore = await free(c, c.bob.address);
    for (const amount of [1n, 2n]) {
      const outcome = await submit(c.api.tx.balances.transferKeepAlive(c.bob.address, amount * UNIT), c.alice);
      expect(outcome.result.status.isFinalized).toBe(true);
    }
    await waitUntil(async () => reorgs.length >= 2, 20_000, 'two reorganisations');
    expect(reorgs.every((reorg) => reorg.retracted.length === 2 && reorg.enacted.length === 3)).toBe(true);
    // New heads went back in number at least once: a branch replaced the tail.
    await waitUntil(
      async () =>
        newHeads.seen.some((head, index) => index > 0 && head.number <= (newHeads.seen[index - 1]?.number ?? 0)),
      10_000,
      'a new head that is not above the previous one',
    );
    expect(await free(c, c.bob.address)).toBe(bobBefore + 3n * UNIT);
    expect(await nextIndex(c, c.alice.address)).toBe(2);
    // Every finalized block is on the best chain.
    const finalized = await c.api.rpc.chain.getHeader(await c.api.rpc.chain.getFinalizedHead());
    for (let number = finalized.number.toNumber(), hash = finalized.hash.toHex(); number > 0; number--) {
      expect((await c.api.rpc.chain.getBlockHash(number)).toHex()).toBe(hash);
      hash = (await c.api.rpc.chain.getHeader(hash)).parentHash.toHex();
    }
    newHeads.stop();
  });

  it('is refused without a finality lag as deep as the reorganisations', async () => {
    await expect(startDevchain({ reorgEvery: 2, reorgDepth: 2, finalityLag: 1 })).rejects.toThrow(
      'reorganisations of depth 2 need a finality lag of at least 2',
    );
  });
});
