import { options as frequencyOptions } from '@frequency-chain/api-augment';
import { ApiPromise, WsProvider } from '@polkadot/api';
import { Redis } from 'ioredis';
import { startStack, type Stack } from '../src/stack.js';

/** The stack every e2e suite starts on: chain, Redis and IPFS reachable at the URLs it hands out. */
describe('e2e stack', () => {
  let stack: Stack;
  // Long enough for a cold build of the gateway image (containers mode).
  beforeAll(async () => (stack = await startStack()), 900_000);
  afterAll(async () => stack?.stop());

  it('serves a Frequency development chain to @polkadot/api', async () => {
    const api = await ApiPromise.create({
      ...frequencyOptions,
      provider: new WsProvider(stack.chainUrl),
      noInitWarn: true,
    });
    try {
      expect((await api.rpc.system.chain()).toString()).toBe('Frequency Development (No Relay)');
      expect(api.runtimeVersion.specName.toString()).toBe('frequency-testnet');
      const alice = (await api.query.msa.publicKeyToMsaId('5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY')).unwrap();
      expect((await api.query.msa.providerToRegistryEntryV2(alice)).isSome).toBe(true);
      expect((await api.query.capacity.capacityLedger(alice)).unwrap().totalCapacityIssued.toBigInt()).toBeGreaterThan(
        0n,
      );
    } finally {
      await api.disconnect();
    }
  });

  it('gives a Redis server', async () => {
    const redis = new Redis(stack.redisUrl, { lazyConnect: true });
    await redis.connect();
    await redis.set('e2e:stack', 'ok');
    expect(await redis.get('e2e:stack')).toBe('ok');
    redis.disconnect();
  });

  it('gives an IPFS node: content added through the RPC API comes back from the gateway', async () => {
    const form = new FormData();
    form.append('file', new Blob(['hello from the e2e stack']), 'hello.txt');
    const added = await fetch(`${stack.ipfsApiUrl}/api/v0/add?cid-version=1`, { method: 'POST', body: form });
    expect(added.status).toBe(200);
    const { Hash } = (await added.json()) as { Hash: string };
    expect(Hash).toMatch(/^bafk/);
    const read = await fetch(`${stack.ipfsGatewayUrl}/ipfs/${Hash}`);
    expect(await read.text()).toBe('hello from the e2e stack');
  });
});
