import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { options as frequencyOptions } from '@frequency-chain/api-augment';
import { jest } from '@jest/globals';
import { ApiPromise, WsProvider } from '@polkadot/api';
import type { Codec } from '@polkadot/types/types';
import { waitUntil } from '@frequency-gateway/devstack';
import {
  BasePathError,
  devchainControl,
  devKeyring,
  parseExtraGenesis,
  spawnDevchain,
  startDevchain,
} from '../src/index.js';
import { connect, submit, sponsor, type Connected } from './support/client.js';

const UNIT = 100_000_000n;

/** What a restart must keep, read over RPC: genesis, heads, every block and the state at each of them. */
async function snapshot(c: Connected) {
  const { api } = c;
  const best = await api.rpc.chain.getHeader();
  const finalized = await api.rpc.chain.getFinalizedHead();
  const names = ['Alice', 'Bob', 'Charlie', 'Dave'];
  const keys = [
    ...names.map((name) => api.query.system.account.key(c.pair(name).address)),
    api.query.system.events.key(),
  ];
  const blocks: unknown[] = [];
  for (let number = 0; number <= best.number.toNumber(); number++) {
    const hash = await api.rpc.chain.getBlockHash(number);
    const block = await api.rpc.chain.getBlock(hash);
    const state = await Promise.all(
      keys.map(async (key) => ((await api.rpc.state.getStorage(key, hash)) as Codec).toHex()),
    );
    blocks.push({ number, hash: hash.toHex(), block: block.toHex(), state });
  }
  return {
    genesis: api.genesisHash.toHex(),
    best: best.hash.toHex(),
    bestNumber: best.number.toNumber(),
    finalized: finalized.toHex(),
    nonces: await Promise.all(
      names.map(async (n) => (await api.rpc.system.accountNextIndex(c.pair(n).address)).toNumber()),
    ),
    balances: await Promise.all(
      names.map(async (n) => (await api.query.system.account(c.pair(n).address)).data.free.toBigInt()),
    ),
    msa: (await api.query.msa.publicKeyToMsaId(c.pair('Dave').address)).toHex(),
    blocks,
  };
}

describe('--base-path: the chain on disk', () => {
  let directory: string;
  beforeEach(() => (directory = mkdtempSync(join(tmpdir(), 'devchain-base-'))));
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  /** A devchain on the directory with a finality lag, with transfers, a remark and a sponsored sign-up sealed. */
  async function grow(): Promise<Connected> {
    const c = await connect({ basePath: directory, finalityLag: 2, blockTimeMs: 50 });
    const ok = async (outcome: ReturnType<typeof submit>) =>
      expect((await outcome).result.dispatchError).toBeUndefined();
    await ok(submit(c.api.tx.balances.transferKeepAlive(c.bob.address, 7n * UNIT), c.alice));
    await ok(submit(c.api.tx.balances.transferAllowDeath(c.charlie.address, 3n * UNIT), c.bob));
    await ok(submit(c.api.tx.system.remark('kept on disk'), c.charlie));
    await sponsor(c.api, c.alice, c.pair('Dave'));
    return c;
  }

  it('restarts with the same genesis, blocks, state, best and finalized heads, and builds on them', async () => {
    const first = await grow();
    const before = await snapshot(first);
    await first.close();
    // Finality trails by the lag: best and finalized differ, and both must come back.
    expect(before.best).not.toBe(before.finalized);
    expect(before.nonces).toEqual([2, 1, 1, 0]);

    const second = await connect({ basePath: directory, finalityLag: 2, blockTimeMs: 50 });
    try {
      expect(await snapshot(second)).toEqual(before);
      const nonce = (await second.api.rpc.system.accountNextIndex(second.alice.address)).toNumber();
      expect(nonce).toBe(2);
      const { result } = await submit(second.api.tx.balances.transferKeepAlive(second.bob.address, UNIT), second.alice);
      expect(result.dispatchError).toBeUndefined();
      const included = await second.api.rpc.chain.getHeader(result.status.asFinalized);
      expect(included.number.toNumber()).toBe(before.bestNumber + 1);
      expect(included.parentHash.toHex()).toBe(before.best);
      expect((await second.api.rpc.system.accountNextIndex(second.alice.address)).toNumber()).toBe(3);
    } finally {
      await second.close();
    }
    // The blocks made after the restart are kept too.
    const third = await connect({ basePath: directory, finalityLag: 2, blockTimeMs: 50 });
    try {
      expect((await third.api.rpc.system.accountNextIndex(third.alice.address)).toNumber()).toBe(3);
      expect((await third.api.rpc.chain.getHeader()).number.toNumber()).toBeGreaterThan(before.bestNumber + 1);
    } finally {
      await third.close();
    }
  }, 120_000);

  it('goes on finalizing where a lag was still catching up when it stopped', async () => {
    // Catch-up blocks every minute: none comes before the close.
    const first = await connect({ basePath: directory, finalityLag: 2, blockTimeMs: 60_000 });
    const tx = first.api.tx.balances.transferKeepAlive(first.bob.address, UNIT);
    await tx.signAsync(first.alice);
    await first.api.rpc.author.submitExtrinsic(tx);
    await waitUntil(async () => first.devchain.chain.best.number === 1, 5_000, 'the transfer sealed in block 1');
    expect(first.devchain.chain.finalized.number).toBe(0);
    await first.close();

    const second = await connect({ basePath: directory, finalityLag: 2, blockTimeMs: 50 });
    try {
      await waitUntil(async () => second.devchain.chain.finalized.number === 1, 5_000, 'block 1 finalized');
      expect(second.devchain.chain.best.number).toBe(3);
    } finally {
      await second.close();
    }
  }, 120_000);

  it('keeps finality where a stall held it, and where it went once the stall ended', async () => {
    const first = await connect({ basePath: directory });
    const heldAt = await devchainControl(first.devchain.url).stallFinality();
    for (let n = 0; n < 3; n++) await first.devchain.chain.command({ createEmpty: true, finalize: true });
    await first.close();

    const second = await connect({ basePath: directory });
    try {
      expect(second.devchain.chain.finalized.number).toBe(heldAt);
      expect(second.devchain.chain.best.number).toBe(heldAt + 3);
      await devchainControl(second.devchain.url).stallFinality();
      await second.devchain.chain.command({ createEmpty: true, finalize: true });
      expect(await devchainControl(second.devchain.url).resumeFinality()).toBe(heldAt + 4);
    } finally {
      await second.close();
    }
    const third = await connect({ basePath: directory });
    try {
      expect(third.devchain.chain.finalized.number).toBe(heldAt + 4);
    } finally {
      await third.close();
    }
  }, 120_000);

  it('replays the chain a reorganisation left, not the retracted blocks', async () => {
    const options = { basePath: directory, sealing: 'manual', finalityLag: 3 } as const;
    const first = await connect(options);
    const seal = () => first.devchain.chain.command({ createEmpty: true, finalize: true });
    await seal();
    const transfer = first.api.tx.balances.transferKeepAlive(first.bob.address, 4n * UNIT);
    await transfer.signAsync(first.alice);
    await first.api.rpc.author.submitExtrinsic(transfer);
    await seal();
    await seal();
    expect(first.devchain.chain.blockByNumber(2)?.extrinsics).toHaveLength(2);
    const { retracted, enacted } = await devchainControl(first.devchain.url).reorg(2);
    // The transfer went back to the pool and into the new branch's first block.
    expect(first.devchain.chain.blockByHash(enacted[0] as string)?.extrinsics).toHaveLength(2);
    await seal();
    const before = await snapshot(first);
    await first.close();
    expect(before.bestNumber).toBe(5);
    expect(before.nonces[0]).toBe(1);
    expect(readFileSync(join(directory, 'blocks.jsonl'), 'utf8')).toContain('{"retract":1}');

    const second = await connect(options);
    try {
      expect(await snapshot(second)).toEqual(before);
      // The retracted blocks are replayed, then retracted again: known by hash, off the best chain.
      const gone = second.devchain.chain.blockByHash(retracted[0] as string);
      expect(gone && second.devchain.chain.isCanonical(gone)).toBe(false);
      expect(second.devchain.chain.finalized.number).toBe(2);
      await second.devchain.chain.command({ createEmpty: true, finalize: true });
      expect(second.devchain.chain.best.number).toBe(6);
    } finally {
      await second.close();
    }
  }, 120_000);

  it('refuses another genesis on the same directory, naming it and both genesis hashes', async () => {
    const first = await grow();
    const genesis = first.api.genesisHash.toHex();
    await first.close();
    const extra = await parseExtraGenesis({ users: [{ account: '//Eve', handle: 'eve' }] });
    const refused = startDevchain({ basePath: directory, genesis: extra });
    await expect(refused).rejects.toThrow(BasePathError);
    await expect(refused).rejects.toThrow(
      new RegExp(
        `^--base-path ${directory}: holds the chain of genesis ${genesis}, but these options build genesis ` +
          `(?!${genesis})0x[0-9a-f]{64}`,
      ),
    );
    // The refusal leaves the directory as it was, and free.
    const again = await startDevchain({ basePath: directory });
    try {
      expect(again.chain.genesisHash).toBe(genesis);
      expect(again.chain.best.number).toBeGreaterThan(0);
    } finally {
      await again.close();
    }
  }, 120_000);

  it('refuses blocks that no longer replay to their recorded hash, naming the directory and the block', async () => {
    const first = await grow();
    await first.close();
    const log = join(directory, 'blocks.jsonl');
    const lines = readFileSync(log, 'utf8').split('\n');
    const second = JSON.parse(lines[1] as string) as { number: number; timestamp: number };
    lines[1] = JSON.stringify({ ...second, timestamp: second.timestamp + 1 });
    writeFileSync(log, lines.join('\n'));
    await expect(startDevchain({ basePath: directory })).rejects.toThrow(
      new RegExp(`^--base-path ${directory}: block 2: replays to 0x[0-9a-f]{64}, but 0x[0-9a-f]{64} was sealed`),
    );
  }, 120_000);

  it('ignores a torn last line with a warning, and appends after it', async () => {
    const first = await grow();
    const best = first.devchain.chain.best.hash;
    await first.close();
    const log = join(directory, 'blocks.jsonl');
    appendFileSync(log, '{"number":99,"hash":"0x12');
    const warning = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      const second = await connect({ basePath: directory, finalityLag: 2, blockTimeMs: 50 });
      try {
        expect(second.devchain.chain.best.hash).toBe(best);
        expect(String(warning.mock.calls[0]?.[0])).toContain(`--base-path ${directory}: ignored the torn last line`);
        await submit(second.api.tx.system.remark('after the torn line'), second.alice);
      } finally {
        await second.close();
      }
    } finally {
      warning.mockRestore();
    }
    const third = await startDevchain({ basePath: directory, finalityLag: 2 });
    try {
      expect(third.chain.best.number).toBeGreaterThan(first.devchain.chain.best.number);
    } finally {
      await third.close();
    }
  }, 120_000);

  it('refuses a directory a running devchain holds', async () => {
    const running = await startDevchain({ basePath: directory });
    try {
      await expect(startDevchain({ basePath: directory })).rejects.toThrow(`--base-path ${directory}: already in use`);
    } finally {
      await running.close();
    }
  }, 120_000);

  it('a CLI devchain killed with SIGKILL restarts from its --base-path with its blocks', async () => {
    const keyring = await devKeyring(42);
    const [alice, bob] = ['Alice', 'Bob'].map((name) => keyring.getPairs().find((p) => p.meta.name === name)!);
    const clientOf = (url: string) =>
      ApiPromise.create({ ...frequencyOptions, provider: new WsProvider(url), noInitWarn: true, throwOnConnect: true });
    const blockHashes = async (api: ApiPromise) => {
      const best = (await api.rpc.chain.getHeader()).number.toNumber();
      const hashes: string[] = [];
      for (let number = 0; number <= best; number++) hashes.push((await api.rpc.chain.getBlockHash(number)).toHex());
      return hashes;
    };
    // Interval sealing: blocks keep coming, so the kill lands while the chain grows.
    const options = { basePath: directory, sealing: 'interval', blockTimeMs: 50, finalityLag: 1 } as const;
    const first = await spawnDevchain(options);
    let api = await clientOf(first.url);
    let hashes: string[];
    try {
      for (const amount of [1n, 2n]) {
        const tx = api.tx.balances.transferKeepAlive(bob!.address, amount * UNIT);
        await new Promise<void>((resolve, reject) => {
          tx.signAndSend(alice!, (result) => {
            if (result.status.isFinalized) resolve();
          }).catch(reject);
        });
      }
      hashes = await blockHashes(api);
    } finally {
      await api.disconnect();
      await first.stop('SIGKILL');
    }
    // Killed: its lock is left behind, naming a process that is gone.
    expect(readFileSync(join(directory, 'lock'), 'utf8')).toBe(String(first.pid));

    const second = await spawnDevchain(options);
    api = await clientOf(second.url);
    try {
      // Every block a client saw was on disk before it was announced; sealing went on from the last one.
      expect((await blockHashes(api)).slice(0, hashes.length)).toEqual(hashes);
      expect((await api.rpc.system.accountNextIndex(alice!.address)).toNumber()).toBe(2);
      const best = (await api.rpc.chain.getHeader()).number.toNumber();
      await waitUntil(async () => (await api.rpc.chain.getHeader()).number.toNumber() > best, 5_000, 'a new block');
    } finally {
      await api.disconnect();
      await second.stop();
    }
    // Two CLI starts: each compiles the devchain and builds its metadata, 10 to 30 s on two busy cores.
  }, 120_000);
});
