// A live network's bad moments, on call: finality that stalls while best blocks go on, and subscriptions that go
// quiet while their socket stays open; and sealing held while transactions wait.
import { holdsFor, waitUntil } from '@frequency-gateway/devstack';
import type { Header } from '@polkadot/types/interfaces';
import { devchainControl } from '../src/index.js';
import { connect, submit, type Connected } from './support/client.js';

const UNIT = 100_000_000n;

/** Every head a subscription delivers, by number. */
async function heads(subscribe: (callback: (header: Header) => void) => Promise<() => void>) {
  const numbers: number[] = [];
  const stop = await subscribe((header) => numbers.push(header.number.toNumber()));
  return { numbers, stop };
}

describe('a finality stall', () => {
  let c: Connected;
  beforeAll(async () => (c = await connect()));
  afterAll(async () => c.close());

  it('holds the finalized head while best blocks go on, then finalizes every block due at once', async () => {
    const finalizedHeads = await heads((callback) => c.api.rpc.chain.subscribeFinalizedHeads(callback));
    const heldAt = await devchainControl(c.devchain.url).stallFinality();
    expect(heldAt).toBe(c.devchain.chain.finalized.number);

    const statuses: string[] = [];
    const unsubscribe = await c.api.tx.balances
      .transferKeepAlive(c.bob.address, UNIT)
      .signAndSend(c.alice, (result) => void statuses.push(result.status.type));
    await waitUntil(async () => statuses.includes('InBlock'), 10_000, 'the transfer in a best block');
    await c.devchain.chain.command({ createEmpty: true, finalize: true });
    const best = c.devchain.chain.best.number;
    expect(best).toBeGreaterThanOrEqual(heldAt + 2);
    await holdsFor(500, () => {
      expect(c.devchain.chain.finalized.number).toBe(heldAt);
      expect(statuses).not.toContain('Finalized');
      expect(Math.max(...finalizedHeads.numbers)).toBe(heldAt);
    });
    expect((await c.api.rpc.chain.getFinalizedHead()).toHex()).toBe(c.devchain.chain.blockByNumber(heldAt)?.hash);

    expect(await devchainControl(c.devchain.url).resumeFinality()).toBe(best);
    await waitUntil(async () => statuses.includes('Finalized'), 10_000, 'the transfer finalized');
    await waitUntil(async () => finalizedHeads.numbers.includes(best), 10_000, 'the finalized head at the best block');
    unsubscribe();
    finalizedHeads.stop();
  });

  it('can be held at a later block, which is still finalized when due; an earlier one is refused', async () => {
    const finalized = c.devchain.chain.finalized.number;
    await expect(devchainControl(c.devchain.url).stallFinality(finalized - 1)).rejects.toThrow(
      `finality is already at #${finalized}`,
    );
    await expect(devchainControl(c.devchain.url).stallFinality(1.5)).rejects.toThrow('at must be a block number');
    expect(await devchainControl(c.devchain.url).stallFinality(finalized + 2)).toBe(finalized + 2);
    for (let n = 0; n < 4; n++) await c.devchain.chain.command({ createEmpty: true, finalize: true });
    expect(c.devchain.chain.best.number).toBe(finalized + 4);
    expect(c.devchain.chain.finalized.number).toBe(finalized + 2);
    await devchainControl(c.devchain.url).resumeFinality();
    expect(c.devchain.chain.finalized.number).toBe(finalized + 4);
  });
});

describe('a finality stall from the start (stallFinalityAt)', () => {
  let c: Connected;
  beforeAll(async () => (c = await connect({ stallFinalityAt: 1 })));
  afterAll(async () => c.close());

  it('finalizes up to that block only, until resumed', async () => {
    const outcome = submit(c.api.tx.system.remark('after the stall'), c.alice);
    await waitUntil(async () => c.devchain.chain.best.number >= 1, 10_000, 'block #1');
    await c.devchain.chain.command({ createEmpty: true, finalize: true });
    await c.devchain.chain.command({ createEmpty: true, finalize: true });
    expect(c.devchain.chain.finalized.number).toBe(1);
    await devchainControl(c.devchain.url).resumeFinality();
    expect((await outcome).statuses).toContain('Finalized');
    expect(c.devchain.chain.finalized.number).toBe(c.devchain.chain.best.number);
  });
});

describe('silent subscriptions', () => {
  let c: Connected;
  beforeAll(async () => (c = await connect()));
  afterAll(async () => c.close());

  it('stop sending while the socket stays open and answers; a new subscription is served', async () => {
    const before = await heads((callback) => c.api.rpc.chain.subscribeNewHeads(callback));
    await c.devchain.chain.command({ createEmpty: true, finalize: true });
    await waitUntil(
      async () => before.numbers.includes(c.devchain.chain.best.number),
      10_000,
      'the head before the silence',
    );
    expect(await devchainControl(c.devchain.url).silenceSubscriptions()).toBeGreaterThanOrEqual(1);
    const last = Math.max(...before.numbers);

    // A subscription of another method: polkadot-js shares one subscription among callers of the same one.
    const after = await heads((callback) => c.api.rpc.chain.subscribeAllHeads(callback));
    await c.devchain.chain.command({ createEmpty: true, finalize: true });
    await c.devchain.chain.command({ createEmpty: true, finalize: true });
    const best = c.devchain.chain.best.number;
    await waitUntil(async () => after.numbers.includes(best), 10_000, 'the new subscription at the best block');
    await holdsFor(300, () => expect(Math.max(...before.numbers)).toBe(last));
    // The same socket still answers calls.
    expect((await c.api.rpc.chain.getHeader()).number.toNumber()).toBe(best);
    before.stop();
    after.stop();
  });
});

describe('silent subscriptions from a block on (silenceSubscriptionsAt)', () => {
  let c: Connected;
  beforeAll(async () => (c = await connect({ silenceSubscriptionsAt: 2 })));
  afterAll(async () => c.close());

  it('sends nothing of that block or later on the subscriptions open then', async () => {
    const seen = await heads((callback) => c.api.rpc.chain.subscribeNewHeads(callback));
    for (let n = 0; n < 3; n++) await c.devchain.chain.command({ createEmpty: true, finalize: true });
    await waitUntil(async () => seen.numbers.includes(1), 10_000, 'block #1 on the subscription');
    await holdsFor(300, () => expect(Math.max(...seen.numbers)).toBe(1));
    expect(c.devchain.chain.best.number).toBe(3);
    seen.stop();
  });
});

describe('held sealing', () => {
  let c: Connected;
  beforeAll(async () => (c = await connect({ sealing: 'interval', blockTimeMs: 200 })));
  afterAll(async () => c.close());

  it('makes no block while held, the transaction waiting in the pool; resumed, the chain goes on and seals it', async () => {
    const control = devchainControl(c.devchain.url);
    const heldAt = await control.holdSealing();
    const outcome = submit(c.api.tx.system.remark('while sealing is held'), c.alice);
    await waitUntil(
      async () => (await c.api.rpc.author.pendingExtrinsics()).length > 0,
      10_000,
      'the remark in the pool',
    );
    // Five block times and more without a block.
    await holdsFor(1_000, () => expect(c.devchain.chain.best.number).toBe(heldAt));
    expect(await control.resumeSealing()).toBe(heldAt);
    const { statuses } = await outcome;
    expect(statuses).toContain('Finalized');
    expect(c.devchain.chain.best.number).toBeGreaterThan(heldAt);
  });

  it('answers the hold after a seal already under way, so that no block follows the number it gives', async () => {
    const chain = c.devchain.chain;
    // A seal queued just before the hold, as an interval tick can be.
    const underWay = chain.command({ createEmpty: true, finalize: true });
    const heldAt = await devchainControl(c.devchain.url).holdSealing();
    const sealed = await underWay;
    expect(heldAt).toBe(sealed.number);
    await holdsFor(600, () => expect(chain.best.number).toBe(heldAt));
    await devchainControl(c.devchain.url).resumeSealing();
  });
});
