import { PassThrough } from 'node:stream';
import { Registry } from 'prom-client';
import { parseExtraGenesis, startDevchain, type Devchain } from '@frequency-gateway/devchain';
import { startRpcProxy, waitUntil, type RpcProxy } from '@frequency-gateway/devstack';
import { createLogger } from '@frequency-gateway/platform';
import { nodeUrls, openChain, type OpeningChain } from '../src/index.js';

const hostOf = (proxy: RpcProxy) => new URL(proxy.url).host;

function collectingLogger(lines: string[]) {
  const destination = new PassThrough();
  destination.on('data', (chunk) => lines.push(String(chunk)));
  return createLogger({ component: 'test', level: 'info', pretty: false, destination });
}

async function switches(metrics: Registry, reason: string): Promise<number> {
  const line = (await metrics.metrics())
    .split('\n')
    .find((l) => l.startsWith(`chain_node_switches_total{reason="${reason}"}`));
  return line === undefined ? 0 : Number(line.split(' ')[1]);
}

describe('FREQUENCY_API_WS_URL as a list of nodes', () => {
  it('refuses an empty entry, an entry that is not a ws:// or wss:// URL, and a repeated one, naming each', () => {
    const problems = (text: string) => {
      const parsed = nodeUrls().safeParse(text);
      return parsed.success ? [] : parsed.error.issues.map((issue) => issue.message);
    };
    expect(nodeUrls().parse('ws://a:9944, wss://b')).toEqual(['ws://a:9944', 'wss://b']);
    expect(problems('ws://a:9944,,ws://b')).toEqual(['entry 2 is empty']);
    expect(problems('ws://a:9944,http://b:9944')).toEqual(['entry 2 (http://b:9944) must be a ws:// or wss:// URL']);
    expect(problems('ws://a:9944,ws://b,ws://a:9944')).toEqual(['entry 3 (ws://a:9944) repeats entry 1']);
    // An entry is shown without its credentials; one that does not parse as a URL is not shown at all.
    expect(problems('nonsense,https://user:s3cret@b')).toEqual([
      'entry 1 ([redacted]) must be a ws:// or wss:// URL',
      'entry 2 (https://user:***@b/) must be a ws:// or wss:// URL',
    ]);
  });
});

// Two loopback proxies in front of one devchain stand for two nodes of one chain: each can be killed, brought back,
// muted (subscriptions silent) or stalled (no answers) while the components' connection goes on.
describe('a connection over several nodes', () => {
  let devchain: Devchain;
  let first: RpcProxy;
  let second: RpcProxy;
  let chain: OpeningChain;
  let metrics: Registry;
  const lines: string[] = [];

  beforeAll(async () => {
    devchain = await startDevchain({ sealing: 'interval', blockTimeMs: 300, finalityLag: 1 });
    [first, second] = await Promise.all([startRpcProxy(devchain.url), startRpcProxy(devchain.url)]);
    metrics = new Registry();
    const logger = collectingLogger(lines);
    chain = openChain({
      url: [first.url, second.url],
      logger,
      metrics,
      reconnectMs: 500,
      answerWithinMs: 1_000,
      watchEveryMs: 500,
    });
    await chain.ready(20_000);
  });
  afterAll(async () => {
    await chain?.close();
    await Promise.all([first?.close(), second?.close()]);
    await devchain?.close();
  });

  const readsWork = async () => {
    const connection = await chain.ready(5_000);
    return (await connection.api.rpc.chain.getHeader()).number.toNumber() > 0;
  };

  it('uses the first node, moves to the next when it dies, within 5 s, and back when that one dies', async () => {
    expect(chain.target).toBe(hostOf(first));
    const killed = performance.now();
    await first.kill();
    await waitUntil(
      async () => chain.target === hostOf(second) && (await readsWork()),
      5_000,
      'the second node in use',
    );
    const switchMs = performance.now() - killed;
    expect(switchMs).toBeLessThan(5_000);
    expect(await switches(metrics, 'closed')).toBe(1);
    await chain.probe(AbortSignal.timeout(2_000));

    await first.revive();
    await second.kill();
    await waitUntil(
      async () => chain.target === hostOf(first) && (await readsWork()),
      5_000,
      'the first node in use again',
    );
    expect(await switches(metrics, 'closed')).toBe(2);
    await second.revive();
  });

  it.each([
    ['whose subscriptions went silent while its head moved on', 'silent', 'silent'],
    ['that stopped answering', 'stalled', 'unanswered'],
  ] as const)('leaves a node %s', async (_what, mode, reason) => {
    const leaving = chain.target === hostOf(first) ? first : second;
    const other = leaving === first ? second : first;
    leaving.mode = mode;
    await waitUntil(async () => chain.target === hostOf(other), 10_000, 'the other node in use');
    leaving.mode = 'pass';
    expect(await switches(metrics, reason)).toBe(1);
    expect(await readsWork()).toBe(true);
    expect(lines.some((line) => line.includes(`leaving the chain node ${hostOf(leaving)}`))).toBe(true);
  });

  it('keeps a node that is slow to answer while it still sends its heads', async () => {
    const inUse = chain.target === hostOf(first) ? first : second;
    const before = await switches(metrics, 'unanswered');
    const heldBefore = inUse.heldAnswers('chain_getHeader');
    inUse.mode = 'busy';
    // Six checks unanswered (each waits 1 s, one every 500 ms): the first ones have been judged.
    await waitUntil(
      async () =>
        inUse.heldAnswers('chain_getHeader') - heldBefore >= 6 &&
        lines.some((line) => line.includes(`the chain node ${hostOf(inUse)} has not answered`)),
      15_000,
      'the watch judged the busy node',
    );
    inUse.mode = 'pass';
    expect(chain.target).toBe(hostOf(inUse));
    expect(await switches(metrics, 'unanswered')).toBe(before);
    expect(await readsWork()).toBe(true);
  });

  it('asks a historic call that a lost node cut off again, rather than answer it with the old failure', async () => {
    const connection = await chain.ready(5_000);
    const hash = await connection.api.rpc.chain.getBlockHash(1);
    const inUse = chain.target === hostOf(first) ? first : second;
    inUse.mode = 'stalled';
    const cutOff = connection.api.rpc.chain.getBlock(hash);
    await inUse.kill();
    await expect(cutOff).rejects.toThrow(/disconnected|not connected/);
    inUse.mode = 'pass';
    await inUse.revive();
    // Asked again every 100 ms, as a retrying scan would: answered by the node now in use.
    const block = await waitUntil(
      async () => (await (await chain.ready(5_000)).api.rpc.chain.getBlock(hash)).block,
      10_000,
      'block #1 read again',
    );
    expect(block.header.number.toNumber()).toBe(1);
  });
});

describe('nodes of different chains', () => {
  it('refuses and reports a node whose genesis differs from the first one, and never uses it', async () => {
    const [ours, theirs] = await Promise.all([
      startDevchain({ sealing: 'instant' }),
      startDevchain({
        sealing: 'instant',
        genesis: await parseExtraGenesis({ users: [{ account: '//Ferdie' }] }),
      }),
    ]);
    const [near, far] = await Promise.all([startRpcProxy(ours.url), startRpcProxy(theirs.url)]);
    const lines: string[] = [];
    const logger = collectingLogger(lines);
    const metrics = new Registry();
    const chain = openChain({ url: [near.url, far.url], logger, metrics, reconnectMs: 300 });
    try {
      await chain.ready(20_000);
      await near.kill();
      await waitUntil(async () => lines.some((line) => line.includes('serves another chain')), 10_000, 'the refusal');
      expect(lines.find((line) => line.includes('serves another chain'))).toContain(hostOf(far));
      await expect(chain.ready(1_000)).rejects.toThrow(/not reachable/);
      await near.revive();
      const connection = await chain.ready(10_000);
      expect(chain.target).toBe(hostOf(near));
      expect(connection.api.genesisHash.toHex()).toBe(ours.chain.genesisHash);
      expect(ours.chain.genesisHash).not.toBe(theirs.chain.genesisHash);
    } finally {
      await chain.close();
      await Promise.all([near.close(), far.close()]);
      await Promise.all([ours.close(), theirs.close()]);
    }
  });
});
