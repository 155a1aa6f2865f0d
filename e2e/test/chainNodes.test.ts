// The gateway on two chain nodes (loopback proxies in front of one devchain) while broadcasts and sign-ups arrive:
// the node in use is killed, every component moves to the other within 5 s without a restart, and every accepted
// request is finalized once. Prints one line starting with `e2e chain nodes`.
import { ChainQueries } from '@frequency-gateway/chain';
import { callJson, waitUntil } from '@frequency-gateway/devstack';
import type { LocalGateway } from '@frequency-gateway/devstack/gateway';
import { cryptoWaitReady } from '@polkadot/util-crypto';
import type { GatewayClient } from '../src/clients/gatewayClient.js';
import { expectFinalizedOnce, startGatewayForLoad, startSteadyLoad, type SteadyLoad } from '../src/steadyLoad.js';

const COMPONENTS = ['account-api', 'account-worker', 'content-publishing-api', 'content-publishing-worker'];
const USERS = 4;
const LOAD_MS = 12_000;
const KILL_AFTER_MS = 4_000;

let gateway: LocalGateway;
let client: GatewayClient;
/** Stopped after the test however it ended, so that no lane outlives it. */
let load: SteadyLoad | undefined;

beforeAll(async () => {
  await cryptoWaitReady();
  ({ gateway, client } = await startGatewayForLoad(USERS, { chainNodes: 2 }));
}, 180_000);
afterEach(async () => {
  await load?.stop();
});
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

test('the node in use killed under load: every component moves to the other within 5 s, and every request is finalized once', async () => {
  const [first, second] = gateway.backing.nodes;
  if (!first || !second) throw new Error('the gateway was started without two chain nodes');
  const host = (url: string) => new URL(url).host;
  for (const component of COMPONENTS) expect((await chainNodeOf(component)).target).toBe(host(first.url));
  const pids = Object.fromEntries(COMPONENTS.map((name) => [name, gateway.components[name]!.pid]));
  const fromBlock = (await new ChainQueries(client.chain.api).bestBlock()).number;

  load = startSteadyLoad(client, { users: USERS });
  const started = Date.now();
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
  const switchMs = await killing;
  await waitUntil(async () => Date.now() - started >= LOAD_MS, LOAD_MS + 1_000, 'the end of the load');
  const accepted = await load.stop();
  const { broadcasts, signUps } = await expectFinalizedOnce(client, accepted, {
    fromBlock,
    ipfsGatewayUrl: gateway.backing.kubo!.gatewayUrl,
    users: { first: 2, count: USERS },
  });

  // No component restarted: the same processes, still running.
  for (const component of COMPONENTS) {
    expect(gateway.components[component]!.pid).toBe(pids[component]);
    expect(gateway.components[component]!.running()).toBe(true);
  }
  const worst = Math.max(...Object.values(switchMs));
  expect(worst).toBeLessThanOrEqual(5_000);
  process.stdout.write(
    `e2e chain nodes: switched in ${JSON.stringify(switchMs)} ms (worst ${worst}); ${broadcasts} broadcasts and ${signUps} sign-ups accepted, all finalized once; ${accepted.refused} refused ${JSON.stringify([...accepted.reasons])} while switching\n`,
  );
}, 240_000);
