// TRUST_UNFINALIZED_BLOCKS=true: outcomes settled from best blocks. Best blocks reorganised under a steady load of
// broadcasts and sign-ups, the retracted blocks' transactions dropped: every outcome settled from a retracted block
// is opened again and settled from the chain that replaced it (its transaction sent again), so every accepted
// request lands on the final chain once, and the content watcher (which reads finalized blocks) delivers each
// broadcast once. Prints a line starting with `e2e trusted reorganisations`.
import { devchainControl } from '@frequency-gateway/devchain';
import { waitUntil } from '@frequency-gateway/devstack';
import type { LocalGateway } from '@frequency-gateway/devstack/gateway';
import { Redis } from 'ioredis';
import type { GatewayClient } from '../src/clients/gatewayClient.js';
import {
  expectFinalizedOnce,
  reorganiseDropping,
  startWatchedGatewayForLoad,
  startSteadyLoad,
  type WatchedBroadcasts,
} from '../src/steadyLoad.js';

const USERS = 4;
/** Where the account and content-publishing trackers keep their scan positions. */
const SCAN_POSITIONS = ['{account}:tx:scanned', '{content-publishing}:tx:scanned'];
let gateway: LocalGateway;
let client: GatewayClient;
let watcher: WatchedBroadcasts;
let redis: Redis;
/** The workers' log lines, as pino JSON. */
const logs: string[] = [];

beforeAll(async () => {
  ({ gateway, client, watcher } = await startWatchedGatewayForLoad(USERS, {
    env: { TRUST_UNFINALIZED_BLOCKS: 'true', LOG_LEVEL: 'info' },
    roleOptions: { worker: { output: logs } },
  }));
  redis = new Redis(gateway.backing.redis.url);
}, 180_000);
afterAll(async () => {
  redis?.disconnect();
  await client?.close();
  await gateway?.stop();
});

test('best blocks reorganised under load with outcomes settled from them: each is opened again and settled from the final chain, and every request lands once', async () => {
  const { api } = client.chain;
  const fromBlock = (await api.rpc.chain.getHeader()).number.toNumber();
  const load = startSteadyLoad(client, { users: USERS, lanes: 2 });
  try {
    await waitUntil(async () => load.broadcasts.length >= 50, 30_000, 'the load under way');
    // Each reorganisation comes once both workers' scans have reached the best block, so that outcomes settled from
    // the blocks it retracts are there to open again.
    const scannedTo = async (best: number) => {
      const positions = await Promise.all(SCAN_POSITIONS.map((key) => redis.get(key)));
      return positions.every((position) => Number(position ?? -1) >= best);
    };
    const { dropped } = await reorganiseDropping(api, devchainControl(gateway.backing.chain.url), { scannedTo });
    expect(dropped).toBeGreaterThan(0);
  } finally {
    await load.stop();
  }
  const figures = await expectFinalizedOnce(client, load, {
    fromBlock,
    ipfsGatewayUrl: gateway.backing.kubo!.gatewayUrl,
    users: { first: 2, count: USERS },
    watcher,
  }).catch((error: unknown) => {
    // What the workers' trackers did, for the failure to say why.
    const tracking = logs.filter((line) => /retracted|scan failed|again|gap|expired/.test(line)).slice(-40);
    throw new Error(`${String(error)}\nthe workers' tracking lines:\n${tracking.join('\n')}`, { cause: error });
  });
  // The workers saw their outcomes retracted and opened them again.
  const rewinds = logs
    .filter((line) => line.includes('were retracted: scanning again'))
    .map((line) => JSON.parse(line) as { component: string; reopened: string[] });
  const reopened = rewinds.reduce((sum, line) => sum + line.reopened.length, 0);
  expect(reopened).toBeGreaterThan(0);
  process.stdout.write(
    `e2e trusted reorganisations: 3 reorganisations 2 deep; ${rewinds.length} rewinds by the workers' scans opened ${reopened} settled outcomes again; ${figures.broadcasts} broadcasts (${figures.delivered} delivered by the watcher) and ${figures.signUps} sign-ups and ${figures.handleChanges} handle changes on the final chain once, ${load.refused} refused ${JSON.stringify([...load.reasons])}\n`,
  );
}, 400_000);
