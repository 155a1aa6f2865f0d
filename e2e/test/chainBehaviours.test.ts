// The gateway through a live network's bad moments, made on call by the devchain, under a steady load of broadcasts
// and sign-ups with the content watcher delivering: subscriptions that go silent, finality that stalls past the
// readiness bound, the node killed and restarted with its chain (its transaction pool lost), best blocks reorganised
// with their transactions dropped, and a runtime upgrade. Every accepted request is finalized once, and every
// broadcast delivered once. Prints lines starting with `e2e chain behaviours`.
import { ChainQueries } from '@frequency-gateway/chain';
import { devchainControl, type DevchainControl } from '@frequency-gateway/devchain';
import { callJson, eachLimited, waitUntil } from '@frequency-gateway/devstack';
import type { LocalGateway } from '@frequency-gateway/devstack/gateway';
import type { GatewayClient } from '../src/clients/gatewayClient.js';
import {
  expectFinalizedOnce,
  reorganiseDropping,
  startWatchedGatewayForLoad,
  startSteadyLoad,
  type SteadyLoad,
  type WatchedBroadcasts,
} from '../src/steadyLoad.js';

/** The components that follow the chain (the content watcher's api reads only Redis). */
const COMPONENTS = [
  'account-api',
  'account-worker',
  'content-publishing-api',
  'content-publishing-worker',
  'content-watcher-worker',
];
/** Every component started: none may restart. */
const STARTED = [...COMPONENTS, 'content-watcher-api'];
const USERS = 4;
/** The chain's block time is 6 s (Aura's slot), so readiness reports a stall after ten of them. */
const STALE_AFTER_MS = 60_000;

let gateway: LocalGateway;
let client: GatewayClient;
let control: DevchainControl;
let watcher: WatchedBroadcasts;
/** The load a test started: stopped after it however it ended, so that no lane outlives its test. */
let runningLoad: SteadyLoad | undefined;
/** Every log line the components printed, as pino JSON. */
const logs: string[] = [];

beforeAll(async () => {
  ({ gateway, client, watcher } = await startWatchedGatewayForLoad(USERS, {
    keepChain: true,
    env: { READINESS_INTERVAL_MS: '1000', LOG_LEVEL: 'info' },
    roleOptions: { api: { output: logs }, worker: { output: logs } },
  }));
  control = devchainControl(gateway.backing.chain.url);
}, 180_000);
afterEach(async () => {
  await runningLoad?.stop();
  runningLoad = undefined;
});
afterAll(async () => {
  await client?.close();
  await gateway?.stop();
});

/** A component's /readyz: its status code and the chain check's error, if any. */
async function readinessOf(component: string): Promise<{ ready: boolean; chainError?: string }> {
  const answer = await callJson(gateway.components[component]!.url, 'GET', '/readyz').catch(() => undefined);
  const chain = (answer?.body?.checks as Record<string, { error?: string }> | undefined)?.chain;
  return { ready: answer?.status === 200, ...(chain?.error ? { chainError: chain.error } : {}) };
}

/** The log lines printed since line `from` whose message contains `text`, parsed. */
function logLinesSince(from: number, text: string): { component: string; time: string; msg: string }[] {
  return logs
    .slice(from)
    .filter((line) => line.includes(text))
    .map((line) => JSON.parse(line) as { component: string; time: string; msg: string });
}

const startOf = async () => ({
  fromBlock: (await new ChainQueries(client.chain.api).bestBlock()).number,
  pids: Object.fromEntries(STARTED.map((name) => [name, gateway.components[name]!.pid])),
});

/** No component restarted: the same processes, still running. */
function expectNoRestart(pids: Record<string, number>) {
  for (const component of STARTED) {
    expect(gateway.components[component]!.pid).toBe(pids[component]);
    expect(gateway.components[component]!.running()).toBe(true);
  }
}

/** Starts the test's load (two lanes: the suite runs beside others) and waits until it is under way. */
async function loadUnderWay(): Promise<SteadyLoad> {
  const started = startSteadyLoad(client, { users: USERS, lanes: 2 });
  runningLoad = started;
  await waitUntil(async () => started.broadcasts.length >= 50, 30_000, 'the load under way');
  return started;
}

const everyComponentReady = () =>
  waitUntil(
    async () => (await eachLimited(COMPONENTS, 4, readinessOf)).every((readiness) => readiness.ready),
    20_000,
    'every component ready again',
  );

const chainFacts = (fromBlock: number) => ({
  fromBlock,
  ipfsGatewayUrl: gateway.backing.kubo!.gatewayUrl,
  users: { first: 2, count: USERS },
  watcher,
});

test('subscriptions gone silent under load: every component notices within 7 s, subscribes anew, and every request is finalized once', async () => {
  const { fromBlock, pids } = await startOf();
  const load = await loadUnderWay();
  const from = logs.length;
  const silencedAt = Date.now();
  await control.silenceSubscriptions();
  await waitUntil(
    async () =>
      new Set(logLinesSince(from, 'leaving the chain node').map((line) => line.component)).size === COMPONENTS.length,
    20_000,
    () => `every component leaving its silent node (so far: ${logLinesSince(from, 'leaving').map((l) => l.component)})`,
  );
  const noticedMs = Object.fromEntries(
    COMPONENTS.map((component) => {
      const line = logLinesSince(from, 'leaving the chain node').find((l) => l.component === component)!;
      expect(line.msg).toContain('no new head came');
      return [component, Date.parse(line.time) - silencedAt];
    }),
  );
  await everyComponentReady();
  const accepted = await load.stop();
  const figures = await expectFinalizedOnce(client, accepted, chainFacts(fromBlock));
  expectNoRestart(pids);
  const worst = Math.max(...Object.values(noticedMs));
  expect(worst).toBeLessThanOrEqual(7_000);
  process.stdout.write(
    `e2e chain behaviours: silent subscriptions noticed in ${JSON.stringify(noticedMs)} ms (worst ${worst}); ${figures.broadcasts} broadcasts (${figures.delivered} delivered by the watcher) and ${figures.signUps} sign-ups and ${figures.handleChanges} handle changes finalized once, ${accepted.refused} refused ${JSON.stringify([...accepted.reasons])}\n`,
  );
}, 300_000);

test('finality stalled past the readiness bound under load: nothing fails or goes twice, readiness says why, and all settles once it resumes', async () => {
  const { fromBlock, pids } = await startOf();
  const load = await loadUnderWay();
  const heldAt = await control.stallFinality();
  const stalledAt = Date.now();
  // Requests keep arriving for the first part of the stall, then wait with it.
  await waitUntil(async () => load.broadcasts.length >= 300, 60_000, 'requests accepted during the stall');
  const accepted = await load.stop();

  // Readiness tells the truth: every component unready, naming the stall, once ten block times have passed.
  const unreadyAfter: Record<string, number> = {};
  await waitUntil(
    async () => {
      for (const component of COMPONENTS) {
        if (unreadyAfter[component] !== undefined) continue;
        const readiness = await readinessOf(component);
        if (!readiness.ready && readiness.chainError?.includes('finality stalled'))
          unreadyAfter[component] = Date.now() - stalledAt;
      }
      return Object.keys(unreadyAfter).length === COMPONENTS.length;
    },
    STALE_AFTER_MS + 30_000,
    () => `every component unready for the stall (so far: ${JSON.stringify(unreadyAfter)})`,
  );
  for (const ms of Object.values(unreadyAfter)) expect(ms).toBeGreaterThanOrEqual(STALE_AFTER_MS - 1_000);
  // What the finality alert reads: the best block runs more than 10 ahead of the finalized one.
  const metrics = await callJson(gateway.components['content-publishing-worker']!.url, 'GET', '/metrics');
  const gauge = (name: string) =>
    Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)`, 'm').exec(String(metrics.body))?.[1]);
  expect(gauge('chain_finalized_block')).toBe(heldAt);
  expect(gauge('chain_best_block') - gauge('chain_finalized_block')).toBeGreaterThan(10);
  // Nothing failed while waiting: every request is still on its way.
  const waiting = await eachLimited([...accepted.broadcasts.slice(-50)], 8, (id) => client.record(id));
  expect(waiting.filter((record) => record?.state === 'failed' || record?.state === 'finalized')).toEqual([]);

  const resumedAt = Date.now();
  await control.resumeFinality();
  await everyComponentReady();
  const readyAgainMs = Date.now() - resumedAt;
  const figures = await expectFinalizedOnce(client, accepted, chainFacts(fromBlock));
  expectNoRestart(pids);
  process.stdout.write(
    `e2e chain behaviours: finality stalled at #${heldAt} for ${Math.round((resumedAt - stalledAt) / 1000)} s; unready after ${JSON.stringify(unreadyAfter)} ms; ready again in ${readyAgainMs} ms; ${figures.broadcasts} broadcasts (${figures.delivered} delivered by the watcher) and ${figures.signUps} sign-ups and ${figures.handleChanges} handle changes finalized once, ${accepted.refused} refused ${JSON.stringify([...accepted.reasons])}\n`,
  );
}, 400_000);

test('the node killed and restarted with its chain (its pool lost) under load: every component is back within 5 s of it, and every request is finalized once', async () => {
  const { fromBlock, pids } = await startOf();
  const load = await loadUnderWay();
  const from = logs.length;
  const killedAt = Date.now();
  await gateway.backing.restartChain('SIGKILL');
  const backAt = Date.now();
  // Each component says once that it lost the node, and once that it is connected again.
  const connectedAgain = () =>
    logLinesSince(from, 'connected to the chain at').filter((line) => Date.parse(line.time) >= backAt - 1_000);
  await waitUntil(
    async () => new Set(connectedAgain().map((line) => line.component)).size === COMPONENTS.length,
    20_000,
    () => `every component connected again (so far: ${connectedAgain().map((line) => line.component)})`,
  );
  const backMs = Object.fromEntries(
    COMPONENTS.map((component) => {
      const line = connectedAgain().find((l) => l.component === component)!;
      return [component, Date.parse(line.time) - backAt];
    }),
  );
  await everyComponentReady();
  const acceptedBefore = load.broadcasts.length;
  await waitUntil(async () => load.broadcasts.length >= acceptedBefore + 50, 30_000, 'the load going on');
  const accepted = await load.stop();
  const figures = await expectFinalizedOnce(client, accepted, chainFacts(fromBlock));
  expectNoRestart(pids);
  const worst = Math.max(...Object.values(backMs));
  expect(worst).toBeLessThanOrEqual(5_000);
  process.stdout.write(
    `e2e chain behaviours: node killed and back in ${backAt - killedAt} ms; components connected again in ${JSON.stringify(backMs)} ms (worst ${worst}); ${figures.broadcasts} broadcasts (${figures.delivered} delivered by the watcher) and ${figures.signUps} sign-ups and ${figures.handleChanges} handle changes finalized once, ${accepted.refused} refused ${JSON.stringify([...accepted.reasons])}\n`,
  );
}, 400_000);

test('best blocks reorganised under load, their transactions dropped: nothing settles from a retracted block, each dropped transaction is sent again, and every request is finalized once', async () => {
  const { fromBlock, pids } = await startOf();
  const load = await loadUnderWay();
  const { api } = client.chain;
  const { retracted, dropped } = await reorganiseDropping(api, control);
  expect(dropped).toBeGreaterThan(0);
  const accepted = await load.stop();
  const figures = await expectFinalizedOnce(client, accepted, chainFacts(fromBlock));
  // No outcome names a retracted block.
  const signUps = await eachLimited(accepted.signUps, 8, ({ referenceId }) => client.record(referenceId, 'account'));
  const blocks = signUps.map((record) => (record as { block?: { hash: string } } | undefined)?.block?.hash);
  expect(blocks.filter((hash) => hash === undefined || retracted.has(hash))).toEqual([]);
  // The dropped transactions went again: the workers' scans submitted them.
  let resent = 0;
  for (const worker of ['account-worker', 'content-publishing-worker']) {
    const metrics = await callJson(gateway.components[worker]!.url, 'GET', '/metrics');
    const line = /^chain_transactions_resubmitted_total\{[^}]*result="submitted"[^}]*\} (\d+)/m.exec(
      String(metrics.body),
    );
    resent += Number(line?.[1] ?? 0);
  }
  expect(resent).toBeGreaterThan(0);
  expectNoRestart(pids);
  process.stdout.write(
    `e2e chain behaviours: 3 reorganisations 2 deep retracted ${retracted.size} blocks and dropped ${dropped} transactions; ${resent} sent again; ${figures.broadcasts} broadcasts (${figures.delivered} delivered by the watcher) and ${figures.signUps} sign-ups and ${figures.handleChanges} handle changes finalized once, ${accepted.refused} refused ${JSON.stringify([...accepted.reasons])}\n`,
  );
}, 400_000);

// Last: the devchain models one upgrade, and it stays.
test('the runtime upgraded under load: no restart, nothing lost, failed or sent twice, and every transaction after it signed for the new runtime', async () => {
  const { fromBlock, pids } = await startOf();
  const load = await loadUnderWay();
  const from = logs.length;
  const { api } = client.chain;
  const { at, specVersion } = await control.upgradeRuntime();
  await waitUntil(
    async () => (await api.rpc.chain.getHeader()).number.toNumber() >= at + 10,
    60_000,
    'ten blocks after the upgrade',
  );
  const acceptedBefore = load.broadcasts.length;
  await waitUntil(
    async () => load.broadcasts.length >= acceptedBefore + 50,
    30_000,
    () => `the load going on (${load.refused} refused: ${[...load.reasons].join('; ')})`,
  );
  const accepted = await load.stop();
  const figures = await expectFinalizedOnce(client, accepted, chainFacts(fromBlock));
  expectNoRestart(pids);
  // The gateway's transactions in the blocks after the upgrade: the devchain checks each signature against its
  // block's runtime, so each of them was signed for the new one.
  const best = (await api.rpc.chain.getHeader()).number.toNumber();
  expect((await api.rpc.state.getRuntimeVersion()).specVersion.toNumber()).toBe(specVersion);
  let signedAfter = 0;
  for (let number = at + 1; number <= best; number++) {
    const block = await api.rpc.chain.getBlock(await api.rpc.chain.getBlockHash(number));
    signedAfter += block.block.extrinsics.filter((extrinsic) => extrinsic.isSigned).length;
  }
  expect(signedAfter).toBeGreaterThan(0);
  const signedAgain = logLinesSince(from, 'signed again for the new runtime').length;
  const sentAgain = logLinesSince(from, 'expired before it was included: sent again').length;
  process.stdout.write(
    `e2e chain behaviours: runtime upgraded to spec ${specVersion} at #${at}; ${signedAfter} transactions signed for it in the ${best - at} blocks after; ${signedAgain} refused for the old runtime and signed again, ${sentAgain} sign-ups sent again; ${figures.broadcasts} broadcasts (${figures.delivered} delivered by the watcher) and ${figures.signUps} sign-ups and ${figures.handleChanges} handle changes finalized once, ${accepted.refused} refused ${JSON.stringify([...accepted.reasons])}\n`,
  );
}, 400_000);
