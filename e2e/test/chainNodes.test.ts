// The gateway on two chain nodes (loopback proxies in front of one devchain) while broadcasts and sign-ups arrive:
// the node in use is killed, every component moves to the other within 5 s without a restart, and every accepted
// request is finalized once. Prints one line starting with `e2e chain nodes`.
import { randomBytes } from 'node:crypto';
import { ChainQueries } from '@frequency-gateway/chain';
import { callJson, dsnpUsers, eachLimited, waitUntil } from '@frequency-gateway/devstack';
import { startLocalGateway, type LocalGateway } from '@frequency-gateway/devstack/gateway';
import { readBatch } from '@frequency-gateway/dsnp';
import { cryptoWaitReady } from '@polkadot/util-crypto';
import { GatewayClient, LOGIN_URI } from '../src/clients/gatewayClient.js';

const COMPONENTS = ['account-api', 'account-worker', 'content-publishing-api', 'content-publishing-worker'];
const USERS = 4;
const LOAD_MS = 12_000;
const KILL_AFTER_MS = 4_000;

let gateway: LocalGateway;
let client: GatewayClient;

beforeAll(async () => {
  await cryptoWaitReady();
  gateway = await startLocalGateway({
    components: [
      ['account', 'api'],
      ['account', 'worker'],
      ['content-publishing', 'api'],
      ['content-publishing', 'worker'],
    ],
    chainNodes: 2,
    sealing: 'interval',
    blockTimeMs: 500,
    finalityLag: 1,
    genesis: dsnpUsers(USERS),
    serviceEnv: {
      account: { SIWF_V2_URI_VALIDATION: LOGIN_URI },
      'content-publishing': { BATCH_INTERVAL_SECONDS: '1' },
    },
  });
  client = await GatewayClient.connect({
    account: gateway.components['account-api']!.url,
    contentPublishing: gateway.components['content-publishing-api']!.url,
    contentWatcher: gateway.components['content-publishing-api']!.url,
    ipfsGateway: gateway.backing.kubo!.gatewayUrl,
    // The test's own reads go to the devchain itself, not through the nodes it kills.
    chainUrl: gateway.backing.chain.url,
  });
}, 180_000);
afterAll(async () => {
  await client?.close();
  await gateway?.stop();
});

/** The chain node a component's /healthz names, and whether it is ready. */
async function chainNodeOf(component: string): Promise<{ target?: string; ready: boolean }> {
  const url = gateway.components[component]!.url;
  const health = await callJson(url, 'GET', '/healthz').catch(() => undefined);
  const ready = await fetch(`${url}/readyz`).then(
    (response) => response.status === 200,
    () => false,
  );
  const checks = health?.body?.checks as Record<string, { target?: string }> | undefined;
  return { ...(checks?.chain?.target ? { target: checks.chain.target } : {}), ready };
}

/** How many broadcast rows from the test's users are on chain since `fromBlock`, read through their batch files. */
async function broadcastRowsOnChain(fromBlock: number): Promise<number> {
  const queries = new ChainQueries(client.chain.api);
  const intent = (await queries.intentByName('dsnp.broadcast'))!;
  const best = (await queries.bestBlock()).number;
  let rows = 0;
  for (const message of await queries.messages(intent.intentId, fromBlock, best + 1)) {
    const file = await fetch(`${gateway.backing.kubo!.gatewayUrl}/ipfs/${message.cid}`);
    const batch = await readBatch(new Uint8Array(await file.arrayBuffer()));
    rows += batch.filter((row) => Number(row.fromId) >= 2 && Number(row.fromId) < 2 + USERS).length;
  }
  return rows;
}

test('the node in use killed under load: every component moves to the other within 5 s, and every request is finalized once', async () => {
  const [first, second] = gateway.backing.nodes;
  if (!first || !second) throw new Error('the gateway was started without two chain nodes');
  const host = (url: string) => new URL(url).host;
  for (const component of COMPONENTS) expect((await chainNodeOf(component)).target).toBe(host(first.url));
  const pids = Object.fromEntries(COMPONENTS.map((name) => [name, gateway.components[name]!.pid]));
  const fromBlock = (await new ChainQueries(client.chain.api).bestBlock()).number;

  const tag = randomBytes(3).toString('hex');
  const broadcasts: string[] = [];
  const signUps: { referenceId: string; address: string }[] = [];
  let refused = 0;
  const started = Date.now();
  const load = async (lane: number) => {
    for (let n = 0; Date.now() - started < LOAD_MS; n++) {
      if (lane === 0 && n % 10 === 0) {
        const { user, referenceId } = await client
          .signUp(undefined)
          .catch(() => ({ user: undefined, referenceId: '' }));
        if (user && referenceId) signUps.push({ referenceId, address: user.address });
        else refused++;
        continue;
      }
      const answer = await callJson(client.contentPublishing, 'POST', `/v1/content/${2 + (n % USERS)}/broadcast`, {
        content: { content: `${tag} ${lane}.${n}`, published: new Date().toISOString() },
      }).catch(() => undefined);
      if (answer?.status === 202) broadcasts.push(answer.body.referenceId as string);
      else refused++;
    }
  };
  const killing = (async () => {
    await waitUntil(async () => Date.now() - started >= KILL_AFTER_MS, KILL_AFTER_MS + 1_000, 'the kill time');
    const killedAt = Date.now();
    await first.kill();
    const switchMs: Record<string, number> = {};
    await waitUntil(
      async () => {
        for (const component of COMPONENTS) {
          if (switchMs[component] !== undefined) continue;
          const node = await chainNodeOf(component);
          if (node.target === host(second.url) && node.ready) switchMs[component] = Date.now() - killedAt;
        }
        return Object.keys(switchMs).length === COMPONENTS.length;
      },
      10_000,
      () => `every component on the second node (so far: ${JSON.stringify(switchMs)})`,
    );
    return switchMs;
  })();
  const [switchMs] = await Promise.all([killing, ...Array.from({ length: 4 }, (_, lane) => load(lane))]);

  // Every accepted request finalized, each sign-up's MSA created once, each broadcast on chain once.
  const records = await client.settled(broadcasts, 120_000);
  expect(records.filter((record) => record.state !== 'finalized')).toEqual([]);
  const signUpRecords = await client.settled(
    signUps.map(({ referenceId }) => referenceId),
    120_000,
    'account',
  );
  expect(signUpRecords.filter((record) => record.state !== 'finalized')).toEqual([]);
  const queries = new ChainQueries(client.chain.api);
  const msas = await eachLimited(signUps, 8, ({ address }) => queries.msaIdOf(address));
  expect(msas.filter((msa) => msa === undefined)).toEqual([]);
  expect(await broadcastRowsOnChain(fromBlock)).toBe(broadcasts.length);

  // No component restarted: the same processes, still running.
  for (const component of COMPONENTS) {
    expect(gateway.components[component]!.pid).toBe(pids[component]);
    expect(gateway.components[component]!.running()).toBe(true);
  }
  const worst = Math.max(...Object.values(switchMs));
  expect(worst).toBeLessThanOrEqual(5_000);
  process.stdout.write(
    `e2e chain nodes: switched in ${JSON.stringify(switchMs)} ms (worst ${worst}); ${broadcasts.length} broadcasts and ${signUps.length} sign-ups accepted, all finalized once; ${refused} refused while switching\n`,
  );
}, 240_000);
