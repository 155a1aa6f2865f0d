import { jest } from '@jest/globals';
import type { SubmittableExtrinsic } from '@polkadot/api/types';
import { Registry } from 'prom-client';
import { startDevchain, type Devchain } from '@frequency-gateway/devchain';
import { waitUntil } from '@frequency-gateway/devstack';
import {
  ChainTiming,
  NonceManager,
  ProviderIdentityError,
  TransactionTracker,
  connectAsProvider,
  connectChain,
  loadProviderKey,
  verifyProvider,
  type ChainConnection,
  type ProviderKey,
} from '../src/index.js';
import { startTestStack, type TestStack } from './support/stack.js';

const MNEMONIC = 'bottom drive obey lake curtain smoke basket hold race lonely fit walk';

describe('chain connection and provider identity', () => {
  let devchain: Devchain;
  let chain: ChainConnection;
  beforeAll(async () => {
    devchain = await startDevchain({ finalityLag: 0 });
    chain = await connectChain({ url: devchain.url });
  });
  afterAll(async () => {
    await chain?.close();
    await devchain?.close();
  });

  it('connects with the Frequency types and reads the block time', async () => {
    expect(chain.blockTimeMs).toBe(6000);
    expect((await chain.api.rpc.system.chain()).toString()).toBe('Frequency Development (No Relay)');
    await expect(chain.probe(AbortSignal.timeout(2000))).resolves.toBeUndefined();
  });

  it('loads sr25519 URIs and mnemonics and Ethereum private keys, and refuses anything else', async () => {
    const alice = await loadProviderKey('//Alice');
    expect(alice.address).toBe('5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY');
    expect((await loadProviderKey(MNEMONIC)).type).toBe('sr25519');
    const ethereum = await loadProviderKey('0x5fb92d6e98884f76de468fa3f6278f8807c48bebc13595d45af5bdc4da702133');
    expect(ethereum.type).toBe('ethereum');
    expect(ethereum.accountId.endsWith('ee'.repeat(12))).toBe(true);
    await expect(loadProviderKey('not a key')).rejects.toThrow(ProviderIdentityError);
  });

  it('accepts a key that controls a registered provider MSA and says what is wrong otherwise', async () => {
    await expect(verifyProvider(chain.api, await loadProviderKey('//Alice'), 1)).resolves.toBeUndefined();
    await expect(verifyProvider(chain.api, await loadProviderKey('//Alice'), 2)).rejects.toThrow(
      'belongs to MSA 1, not to PROVIDER_ID 2',
    );
    await expect(verifyProvider(chain.api, await loadProviderKey('//Bob'), 1)).rejects.toThrow('has no MSA');
  });

  it('connects as the provider at worker start, or refuses with the reason', async () => {
    const provider = await connectAsProvider({ url: devchain.url, seedPhrase: '//Alice', providerId: 1 });
    expect(provider.providerId).toBe(1n);
    expect(provider.key.address).toBe('5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY');
    await provider.close();
    await expect(connectAsProvider({ url: devchain.url, seedPhrase: '//Alice', providerId: 3 })).rejects.toThrow(
      ProviderIdentityError,
    );
  });
});

describe('stalled finality', () => {
  it('makes the probe fail once the best block is ahead and the finalized head stops moving', async () => {
    const devchain = await startDevchain({ finalityLag: 3, blockTimeMs: 50 });
    const chain = await connectChain({ url: devchain.url, staleAfterMs: 300 });
    try {
      await expect(chain.probe(AbortSignal.timeout(2000))).resolves.toBeUndefined();
      // Finality trails by three blocks; stop the finality catch-up and let blocks pile up ahead of it.
      devchain.chain.stop();
      for (let i = 0; i < 5; i++) devchain.chain.seal();
      const stalled = () =>
        chain.probe(AbortSignal.timeout(2000)).then(
          () => false,
          (error: Error) => error.message.includes('finality stalled'),
        );
      await waitUntil(stalled, 5_000, 'the probe to report finality stalled');
    } finally {
      await chain.close();
      await devchain.close();
    }
  });
});

describe('head and pending-transaction gauges', () => {
  /** A gauge's value in the registry's exposition, or undefined when it has none. */
  const gaugeValue = async (metrics: Registry, name: string) => {
    const line = (await metrics.metrics()).split('\n').find((l) => l.startsWith(`${name} `));
    return line === undefined ? undefined : Number(line.split(' ')[1]);
  };

  it('exports the best and finalized block, and how many finalized blocks the oldest transaction has waited', async () => {
    const stack = await startTestStack({ sealing: 'interval', finalityLag: 3, blockTimeMs: 50 });
    const metrics = new Registry();
    const chain = await connectChain({ url: stack.devchain.url, metrics });
    try {
      const heads = await waitUntil(
        async () => {
          const best = await gaugeValue(metrics, 'chain_best_block');
          const finalized = await gaugeValue(metrics, 'chain_finalized_block');
          return best !== undefined && finalized !== undefined && best >= 5 && finalized > 0 && { best, finalized };
        },
        10_000,
        'the head gauges to follow the chain',
      );
      expect(heads.best).toBeGreaterThan(heads.finalized);

      const tracker = new TransactionTracker(chain.api, stack.redis(), {
        prefix: 'gauges',
        onOutcome: async () => undefined,
        metrics,
        finalizedHead: () => chain.heads().finalized,
      });
      expect(await gaugeValue(metrics, 'chain_transactions_pending')).toBe(0);
      expect(await gaugeValue(metrics, 'chain_transaction_oldest_pending_blocks')).toBe(0);
      // A recorded transaction signed at block 1 that never lands: its age grows with every finalized block.
      const signedFor = { specVersion: 189, transactionVersion: 1 };
      const signed = { hash: `0x${'ab'.repeat(32)}` as const, nonce: 0, birth: 1, death: 1_000_000, signedFor };
      await tracker.record({ ...signed, extrinsic: chain.api.tx.system.remark('never sent') }, ['job-1']);
      expect(await gaugeValue(metrics, 'chain_transactions_pending')).toBe(1);
      // Blocks come every 50 ms: the age read lies between the finalized heads seen before and after it.
      const before = chain.heads().finalized;
      const age = await gaugeValue(metrics, 'chain_transaction_oldest_pending_blocks');
      const after = chain.heads().finalized;
      expect(age).toBeGreaterThanOrEqual(before - 1);
      expect(age).toBeLessThanOrEqual(after - 1);
      expect(age).toBeGreaterThan(0);
    } finally {
      await chain.close();
      await stack.close();
    }
  });
});

describe('nonce reservations shared through Redis', () => {
  let stack: TestStack;
  let chain: ChainConnection;
  let key: ProviderKey;
  const redis = () => stack.redis();
  beforeAll(async () => {
    stack = await startTestStack();
    chain = stack.chain;
    key = await loadProviderKey('//Charlie');
  });
  afterAll(async () => stack?.close());

  const submit = (tx: SubmittableExtrinsic<'promise'>, nonce: number) =>
    new Promise<string>((resolve, reject) => {
      tx.signAndSend(key.address, { signer: key.signer, nonce, era: 0 }, (result) => {
        if (result.status.isFinalized) resolve(result.status.type);
        if (result.status.isInvalid || result.status.isDropped) reject(new Error(result.status.type));
      }).catch(reject);
    });

  it('gives two workers distinct, consecutive nonces that all land on chain', async () => {
    const workers = [0, 1].map(() => new NonceManager(redis(), chain.api, key.address, { prefix: 'test-a' }));
    const start = (await chain.api.rpc.system.accountNextIndex(key.address)).toNumber();
    const reserved = await Promise.all(Array.from({ length: 200 }, (_, i) => workers[i % 2]!.reserve()));
    const sorted = [...reserved].sort((a, b) => a - b);
    expect(sorted).toEqual(Array.from({ length: 200 }, (_, i) => start + i));
    const outcomes = await Promise.all(
      // The lowest 40: a nonce above one never submitted would wait in the pool for the gap.
      sorted.slice(0, 40).map((nonce) => submit(chain.api.tx.system.remark(`n${nonce}`), nonce)),
    );
    expect(outcomes.every((status) => status === 'Finalized')).toBe(true);
  }, 60_000);

  it('refills a nonce that was reserved but never submitted, once the chain stands still behind it', async () => {
    const timing = new ChainTiming({ recordWithinMs: 50, submissionMs: 50, resubmitAfterMs: 150, gapRefillMs: 200 });
    const manager = new NonceManager(redis(), chain.api, key.address, { prefix: 'test-b', timing });
    await manager.resync();
    const lost = await manager.reserve();
    // Reserved ahead of the chain's next index: the gap watch starts.
    const next = await manager.reserve();
    expect(next).toBe(lost + 1);
    const waiting = submit(chain.api.tx.system.remark('after the gap'), next);
    // The gap timeout is what is under test: the chain has to stand still behind the gap for longer than it (a
    // reserve() that looked sooner would hand out another nonce), counted from the watch's own start.
    const watch = `test-b:nonce-gap:${key.address}`;
    await waitUntil(
      async () => Date.now() - Number((await redis().hget(watch, 'since')) ?? Date.now()) > timing.gapRefillMs,
      5_000,
      'the gap standing still for longer than its timeout',
    );
    expect(await manager.reserve()).toBe(lost);
    await submit(chain.api.tx.system.remark('fills the gap'), lost);
    await expect(waiting).resolves.toBe('Finalized');
  });

  it('follows the chain after a restart or foreign transactions', async () => {
    const manager = new NonceManager(redis(), chain.api, key.address, { prefix: 'test-c' });
    const chainNext = (await chain.api.rpc.system.accountNextIndex(key.address)).toNumber();
    expect(await manager.reserve()).toBe(chainNext);
    const logged = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    await submit(chain.api.tx.system.remark('foreign'), chainNext);
    await submit(chain.api.tx.system.remark('foreign 2'), chainNext + 1);
    logged.mockRestore();
    expect(await manager.reserve()).toBe(chainNext + 2);
  });
});
