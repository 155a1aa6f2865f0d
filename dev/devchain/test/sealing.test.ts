import { holdsFor } from '@frequency-gateway/devstack';
import WebSocket from 'ws';
import { connect, submit, type Connected } from './support/client.js';

const UNIT = 100_000_000n;

interface RpcAnswer {
  id?: number;
  result?: unknown;
  error?: { code: number; message: string };
  method?: string;
  params?: { subscription: string; result: unknown };
}

/** A raw JSON-RPC WebSocket client: what a node's answers look like on the wire, without polkadot-js decoding. */
async function rawClient(url: string) {
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  const notifications: RpcAnswer[] = [];
  const waiting = new Map<number, (answer: RpcAnswer) => void>();
  socket.on('message', (data) => {
    const answer = JSON.parse(data.toString()) as RpcAnswer;
    if (answer.method) notifications.push(answer);
    else waiting.get(answer.id as number)?.(answer);
  });
  let id = 0;
  return {
    notifications,
    call: (method: string, params: unknown[] = []) =>
      new Promise<RpcAnswer>((resolve) => {
        id += 1;
        waiting.set(id, resolve);
        socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
      }),
    close: () => socket.close(),
  };
}

const waitFor = async (condition: () => boolean, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

describe('instant sealing (as `frequency --dev --sealing=instant`)', () => {
  let c: Connected;
  beforeAll(async () => (c = await connect()));
  afterAll(async () => c.close());

  it('makes a block final the moment it is made: inBlock and finalized name the same block, finalized head = best', async () => {
    const raw = await rawClient(c.devchain.url);
    try {
      const tx = c.api.tx.balances.transferKeepAlive(c.bob.address, UNIT);
      await tx.signAsync(c.alice);
      const subscribed = await raw.call('author_submitAndWatchExtrinsic', [tx.toHex()]);
      await waitFor(() =>
        raw.notifications.some(
          (n) => typeof n.params?.result === 'object' && 'finalized' in (n.params.result as object),
        ),
      );
      const statuses = raw.notifications
        .filter((n) => n.params?.subscription === subscribed.result)
        .map((n) => n.params?.result);
      const inBlock = (statuses[1] as { inBlock: string }).inBlock;
      expect(statuses).toEqual(['ready', { inBlock }, { finalized: inBlock }]);
      expect((await raw.call('chain_getFinalizedHead')).result).toBe(inBlock);
      expect((await raw.call('chain_getBlockHash')).result).toBe(inBlock);
    } finally {
      raw.close();
    }
  });

  it('seals one block per transaction that enters the pool ready, so a burst leaves empty blocks after the first', async () => {
    const before = c.devchain.chain.best.number;
    const nonce = (await c.api.rpc.system.accountNextIndex(c.charlie.address)).toNumber();
    await Promise.all(
      [0, 1, 2].map((step) => submit(c.api.tx.system.remark(`burst ${step}`), c.charlie, { nonce: nonce + step })),
    );
    await waitFor(() => c.devchain.chain.best.number >= before + 3);
    const blocks = [1, 2, 3].map((offset) => c.devchain.chain.blockByNumber(before + offset));
    // Each block holds the timestamp inherent; the signed ones are spread however the pool had them ready.
    const signed = blocks.map((block) => (block?.extrinsics.length ?? 1) - 1);
    expect(signed.reduce((sum, n) => sum + n, 0)).toBe(3);
    expect(c.devchain.chain.best.number).toBe(before + 3);
    expect(c.devchain.chain.finalized.number).toBe(c.devchain.chain.best.number);
    // Like a node, it takes a moment per block: a burst cannot outrun the eras its transactions carry.
    const times = blocks.map((block) => block?.timestamp ?? 0);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(50);
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(50);
  });

  it('makes no block when nothing is submitted (no block time)', async () => {
    const best = c.devchain.chain.best.number;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(c.devchain.chain.best.number).toBe(best);
  });

  it('serves engine_createBlock and engine_finalizeBlock with manual seal answers', async () => {
    const created = await c.api.rpc.engine.createBlock(true, false);
    const hash = created.blockHash.toHex();
    const header = await c.api.rpc.chain.getHeader();
    expect(header.hash.toHex()).toBe(hash);
    expect((await c.api.rpc.chain.getFinalizedHead()).toHex()).toBe(header.parentHash.toHex());
    expect((await c.api.rpc.engine.finalizeBlock(hash)).isTrue).toBe(true);
    expect((await c.api.rpc.chain.getFinalizedHead()).toHex()).toBe(hash);

    const raw = await rawClient(c.devchain.url);
    try {
      const answer = await raw.call('engine_createBlock', [true, true, null]);
      expect(answer.result).toEqual({
        hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        aux: {
          header_only: false,
          clear_justification_requests: false,
          needs_justification: false,
          bad_justification: false,
          is_new_best: true,
        },
        proof_size: 0,
      });
      expect((await raw.call('chain_getFinalizedHead')).result).toBe((answer.result as { hash: string }).hash);
      expect((await raw.call('engine_createBlock', [false, true])).error).toEqual({
        code: 12_000,
        message: 'Transaction pool is empty, set create_empty to true, if you want to create empty blocks',
      });
      expect((await raw.call('engine_finalizeBlock', [`0x${'ab'.repeat(32)}`])).error?.code).toBe(16_000);
    } finally {
      raw.close();
    }
  });

  it('encodes block numbers in headers and blocks as hex strings, as a node does, and polkadot-js decodes them', async () => {
    const raw = await rawClient(c.devchain.url);
    try {
      const best = c.devchain.chain.best;
      const header = (await raw.call('chain_getHeader')).result as { number: unknown };
      expect(header.number).toBe(`0x${best.number.toString(16)}`);
      const block = (await raw.call('chain_getBlock', [best.hash])).result as {
        block: { header: { number: unknown } };
      };
      expect(block.block.header.number).toBe(`0x${best.number.toString(16)}`);
      const subscribed = await raw.call('chain_subscribeNewHeads');
      await waitFor(() => raw.notifications.some((n) => n.params?.subscription === subscribed.result));
      const first = raw.notifications.find((n) => n.params?.subscription === subscribed.result);
      expect((first?.params?.result as { number: unknown }).number).toMatch(/^0x[0-9a-f]+$/);
    } finally {
      raw.close();
    }
    expect((await c.api.rpc.chain.getHeader()).number.toNumber()).toBe(c.devchain.chain.best.number);
    const signed = await c.api.rpc.chain.getBlock();
    expect(signed.block.header.number.toNumber()).toBe(c.devchain.chain.best.number);
  });

  it('answers GET /health and /health/readiness on the RPC port as a node does', async () => {
    const health = await fetch(`${c.devchain.httpUrl}/health`);
    expect(health.status).toBe(200);
    expect(health.headers.get('content-type')).toBe('application/json');
    expect(await health.json()).toEqual({ isSyncing: false, peers: 0, shouldHavePeers: false });
    expect((await fetch(`${c.devchain.httpUrl}/health/readiness`)).status).toBe(200);
    expect((await fetch(`${c.devchain.httpUrl}/other`)).status).toBe(405);
  });
});

describe('manual sealing', () => {
  let c: Connected;
  beforeAll(async () => (c = await connect({ sealing: 'manual' })));
  afterAll(async () => c.close());

  it('keeps transactions in the pool until engine_createBlock seals them', async () => {
    const statuses: string[] = [];
    const best = c.devchain.chain.best.number;
    const unsubscribe = await c.api.tx.system
      .remark('manual')
      .signAndSend(c.alice, (result) => void statuses.push(result.status.type));
    await waitFor(() => statuses.includes('Ready'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(c.devchain.chain.best.number).toBe(best);
    expect(c.devchain.chain.pool.size).toBe(1);
    await c.api.rpc.engine.createBlock(false, true);
    await waitFor(() => statuses.includes('Finalized'));
    unsubscribe();
    expect(c.devchain.chain.best.number).toBe(best + 1);
    expect(c.devchain.chain.blockByNumber(best + 1)?.extrinsics).toHaveLength(2);
  });
});

describe('interval sealing without empty blocks', () => {
  it('seals only when a transaction is ready, each block final at once', async () => {
    const c = await connect({ sealing: 'interval', blockTimeMs: 50, createEmptyBlocks: false });
    try {
      const best = c.devchain.chain.best.number;
      // Four block times with nothing ready: no block.
      await holdsFor(200, () => expect(c.devchain.chain.best.number).toBe(best), 20);
      const { result } = await submit(c.api.tx.system.remark('interval'), c.alice);
      expect(result.status.isFinalized).toBe(true);
      expect(c.devchain.chain.best.number).toBe(best + 1);
      expect(c.devchain.chain.finalized.number).toBe(best + 1);
    } finally {
      await c.close();
    }
  });
});
