import { jest } from '@jest/globals';
import { waitUntil } from '@frequency-gateway/devstack';
import { connect, submit, type Connected } from './support/client.js';

const UNIT = 10n ** 8n;

describe('the devchain with a real @polkadot/api client over WebSocket', () => {
  let c: Connected;
  beforeAll(async () => (c = await connect()));
  afterAll(async () => c.close());

  const free = async (address: string) => (await c.api.query.system.account(address)).data.free.toBigInt();

  it('presents itself as a standalone Frequency development node', async () => {
    expect(c.api.runtimeVersion.specName.toString()).toBe('frequency-testnet');
    expect(c.api.runtimeVersion.specVersion.toNumber()).toBe(189);
    expect((await c.api.rpc.system.chain()).toString()).toBe('Frequency Development (No Relay)');
    expect((await c.api.rpc.system.properties()).tokenSymbol.unwrap()[0]?.toString()).toBe('UNIT');
    expect(c.api.consts.balances.existentialDeposit.toBigInt()).toBe(1_000_000n);
    expect(c.api.genesisHash.toHex()).toBe((await c.api.rpc.chain.getBlockHash(0)).toHex());
  });

  it('takes a signed transfer through Ready, InBlock and Finalized, with the runtime events and fees', async () => {
    const before = { alice: await free(c.alice.address), bob: await free(c.bob.address) };
    const nonce = (await c.api.rpc.system.accountNextIndex(c.alice.address)).toNumber();
    const { statuses, result } = await submit(c.api.tx.balances.transferKeepAlive(c.bob.address, 5n * UNIT), c.alice);
    // The block is final as soon as it is made; polkadot-js drops the InBlock result when Finalized follows at
    // once (as against a node), so InBlock may be missing.
    expect(statuses.filter((status) => status !== 'InBlock')).toEqual(['Ready', 'Finalized']);
    expect(result.events.map(({ event }) => `${event.section}.${event.method}`)).toEqual([
      'balances.Withdraw',
      'balances.Transfer',
      'transactionPayment.TransactionFeePaid',
      'system.ExtrinsicSuccess',
    ]);
    const fee = result.events.find(({ event }) => event.method === 'TransactionFeePaid')!.event.data[1]!.toString();
    expect(await free(c.bob.address)).toBe(before.bob + 5n * UNIT);
    expect(await free(c.alice.address)).toBe(before.alice - 5n * UNIT - BigInt(fee));
    const priced = await c.api.tx.balances.transferKeepAlive(c.bob.address, 5n * UNIT).signAsync(c.alice, { nonce });
    const queried = await c.api.call.transactionPaymentApi.queryInfo(priced.toU8a(), priced.encodedLength);
    expect(queried.partialFee.toBigInt()).toBe(BigInt(fee));
  });

  it('reports a failed call as ExtrinsicFailed with the runtime error, and still charges the fee', async () => {
    const { result } = await submit(c.api.tx.balances.transferKeepAlive(c.charlie.address, 2n ** 62n), c.bob);
    expect(result.dispatchError?.isToken).toBe(true);
    expect(result.dispatchError?.asToken.type).toBe('FundsUnavailable');
    expect(result.events.map(({ event }) => event.method)).toContain('ExtrinsicFailed');
    expect((await c.api.query.system.account(c.bob.address)).nonce.toNumber()).toBeGreaterThan(0);
  });

  it('rejects a bad signature and a stale nonce as a node does', async () => {
    // polkadot-js logs every rejected RPC call; here the rejections are the expected outcome.
    const logged = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    const tx = c.api.tx.balances.transferKeepAlive(c.bob.address, UNIT);
    await tx.signAsync(c.alice);
    const tampered = tx.toU8a();
    tampered[tampered.length - 1] = (tampered[tampered.length - 1] as number) ^ 1;
    await expect(c.api.rpc.author.submitExtrinsic(tampered)).rejects.toThrow(
      '1010: Invalid Transaction: Transaction has a bad signature',
    );
    const stale = c.api.tx.balances.transferKeepAlive(c.bob.address, UNIT);
    await stale.signAsync(c.alice, { nonce: 0 });
    await expect(c.api.rpc.author.submitExtrinsic(stale)).rejects.toThrow(
      '1010: Invalid Transaction: Transaction is outdated',
    );
    expect(logged.mock.calls.map((args) => args.map(String).join(' '))).toEqual([
      expect.stringContaining('Transaction has a bad signature'),
      expect.stringContaining('Transaction is outdated'),
    ]);
    logged.mockRestore();
  });

  it('refuses an extrinsic whose mortal era has passed, as a node does (the era resolves to another birth block)', async () => {
    const logged = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    const header = await c.api.rpc.chain.getHeader();
    const era = c.api.createType('ExtrinsicEra', { current: header.number.toNumber(), period: 4 });
    const mortal = await c.api.tx.balances
      .transferKeepAlive(c.bob.address, UNIT)
      .signAsync(c.alice, { era, blockHash: header.hash });
    for (let i = 0; i < 5; i++) await submit(c.api.tx.system.remark(`block ${i}`), c.alice);
    await expect(c.api.rpc.author.submitExtrinsic(mortal)).rejects.toThrow(
      '1010: Invalid Transaction: Transaction has a bad signature',
    );
    logged.mockRestore();
  });

  it('holds a future nonce until the gap closes, then includes both in order', async () => {
    const nonce = (await c.api.rpc.system.accountNextIndex(c.charlie.address)).toNumber();
    const later = submit(c.api.tx.balances.transferKeepAlive(c.bob.address, UNIT), c.charlie, { nonce: nonce + 1 });
    // Held in the pool, not included, however long it is there.
    await waitUntil(async () => c.devchain.chain.pool.size === 1, 5_000, 'the future transaction in the pool');
    const first = await submit(c.api.tx.balances.transferKeepAlive(c.bob.address, UNIT), c.charlie, { nonce });
    const second = await later;
    expect(first.statuses.filter((status) => status !== 'InBlock')).toEqual(['Ready', 'Finalized']);
    expect(second.statuses.filter((status) => status !== 'InBlock')).toEqual(['Future', 'Ready', 'Finalized']);
    expect((await c.api.query.system.account(c.charlie.address)).nonce.toNumber()).toBe(nonce + 2);
  });

  it('answers queries at past blocks from the state of that block', async () => {
    const { result } = await submit(c.api.tx.balances.transferKeepAlive(c.charlie.address, 7n * UNIT), c.alice);
    const inBlock = result.status.asFinalized;
    const header = await c.api.rpc.chain.getHeader(inBlock);
    const parent = header.parentHash;
    const atBlock = (await (await c.api.at(inBlock)).query.system.account(c.charlie.address)).data.free.toBigInt();
    const atParent = (await (await c.api.at(parent)).query.system.account(c.charlie.address)).data.free.toBigInt();
    expect(atBlock - atParent).toBe(7n * UNIT);
  });

  it('transfers everything with transferAll: keeping the existential deposit, or reaping the account', async () => {
    const ferdie = c.pair('Ferdie');
    const eve = c.pair('Eve');
    await submit(c.api.tx.balances.transferAll(eve.address, true), ferdie);
    expect(await free(ferdie.address)).toBe(c.api.consts.balances.existentialDeposit.toBigInt());
    await submit(c.api.tx.balances.transferKeepAlive(ferdie.address, 10n * UNIT), eve);
    const all = await submit(c.api.tx.balances.transferAll(eve.address, false), ferdie);
    expect(all.result.events.map(({ event }) => `${event.section}.${event.method}`)).toContain('system.KilledAccount');
    expect((await c.api.query.system.account(ferdie.address)).providers.toNumber()).toBe(0);
    expect(await free(ferdie.address)).toBe(0n);
  });

  it('serves one-shot calls over HTTP POST too', async () => {
    const response = await fetch(c.devchain.httpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'chain_getBlockHash', params: [0] }),
    });
    expect(await response.json()).toEqual({ jsonrpc: '2.0', id: 7, result: c.api.genesisHash.toHex() });
    const unknown = await fetch(c.devchain.httpUrl, {
      method: 'POST',
      body: JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'nope_nothing', params: [] }),
    });
    expect(await unknown.json()).toMatchObject({ id: 8, error: { code: -32601 } });
  });
});

describe('sealing and finality', () => {
  it('lets finality trail the best block by the configured lag', async () => {
    const c = await connect({ finalityLag: 2, blockTimeMs: 50 });
    try {
      const { statuses, result } = await submit(c.api.tx.balances.transferKeepAlive(c.bob.address, UNIT), c.alice);
      // The devchain sends Ready, InBlock, Finalized; @polkadot/api reads a block's events before it reports InBlock
      // and drops that report (switchMap) when Finalized arrives first, as it can 100 ms later on a loaded machine.
      expect(statuses[0]).toBe('Ready');
      expect(statuses.at(-1)).toBe('Finalized');
      expect(statuses.filter((status) => !['Ready', 'InBlock'].includes(status))).toEqual(['Finalized']);
      const included = (await c.api.rpc.chain.getHeader(result.status.asFinalized)).number.toNumber();
      expect(c.devchain.chain.best.number).toBeGreaterThanOrEqual(included + 2);
      expect(c.devchain.chain.finalized.number).toBe(c.devchain.chain.best.number - 2);
    } finally {
      await c.close();
    }
  });

  it('seals blocks on an interval with a timestamp inherent in each', async () => {
    const c = await connect({ sealing: 'interval', blockTimeMs: 100 });
    try {
      const heads: number[] = [];
      const unsubscribe = await c.api.rpc.chain.subscribeNewHeads((header) => {
        heads.push(header.number.toNumber());
      });
      await waitUntil(async () => heads.length >= 4, 5_000, 'four sealed blocks');
      unsubscribe();
      expect(heads.length).toBeGreaterThanOrEqual(4);
      expect(heads).toEqual([...heads].sort((a, b) => a - b));
      const block = await c.api.rpc.chain.getBlock();
      expect(block.block.extrinsics[0]?.method.section).toBe('timestamp');
      const now = (await c.api.query.timestamp.now()).toNumber();
      expect(Math.abs(now - Date.now())).toBeLessThan(5_000);
    } finally {
      await c.close();
    }
  });
});

describe('the transaction pool limit', () => {
  let c: Connected;
  beforeAll(async () => (c = await connect({ futureLimit: 2 })));
  afterAll(async () => c.close());

  it('counts a nonce whose predecessor waits ready in the pool as ready, not future', async () => {
    const nonce = (await c.api.rpc.system.accountNextIndex(c.bob.address)).toNumber();
    const outcomes = await Promise.all(
      [0, 1, 2, 3, 4].map((step) => submit(c.api.tx.system.remark(`chain ${step}`), c.bob, { nonce: nonce + step })),
    );
    for (const { statuses } of outcomes) {
      expect(statuses[0]).toBe('Ready');
      expect(statuses).toContain('Finalized');
    }
  });

  it('drops the longest-waiting future extrinsic when more than the limit wait', async () => {
    const nonce = (await c.api.rpc.system.accountNextIndex(c.charlie.address)).toNumber();
    const statuses: string[][] = [[], [], []];
    const waiting = [1, 2, 3].map((gap, i) =>
      c.api.tx.system
        .remark(`future ${gap}`)
        .signAndSend(c.charlie, { nonce: nonce + gap }, (result) => void statuses[i]!.push(result.status.type)),
    );
    await Promise.all(waiting);
    await waitUntil(async () => statuses[0]!.includes('Dropped'), 5_000, 'the first future transaction dropped');
    expect(statuses[0]).toEqual(['Future', 'Dropped']);
    expect(statuses[1]).toEqual(['Future']);
    expect(statuses[2]).toEqual(['Future']);
  });
});
