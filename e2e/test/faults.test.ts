// Faults through the container runtime, against the six components in containers (always: the faults are the
// container runtime's): a content-publishing worker killed in the middle of 2,000 broadcasts and started again,
// Redis restarted, the chain paused for 30 s, Kubo stopped for 30 s. Every accepted request must be finalized once,
// notified once and delivered once by the content watcher; the apis' readiness must say 503 while a dependency is
// gone and 200 after. Prints one line per fault and the counts, starting with `e2e faults`.
import { randomBytes } from 'node:crypto';
import { waitUntil } from '@frequency-gateway/devstack';
import { cryptoWaitReady } from '@polkadot/util-crypto';
import { docker } from '../src/containers/docker.js';
import { deliveredOnce } from '../src/journeys/delivered.js';
import { call, eachLimited, GatewayClient } from '../src/journeys/gatewayClient.js';
import {
  ACCOUNT_WEBHOOKS,
  CONTENT_WEBHOOKS,
  startGatewayUnderTest,
  type GatewayUnderTest,
} from '../src/journeys/gatewayUnderTest.js';

const WATCHER_PATH = '/watcher/broadcasts';
/** How long the chain stays paused and Kubo stopped. */
const OUTAGE_MS = 30_000;

let gateway: GatewayUnderTest;
let client: GatewayClient;
let msaId: string;
/** Every broadcast accepted (202) so far, by tag, with its number. */
const accepted = new Map<string, { number: number; referenceId: string }[]>();
const totals = { accepted: 0, finalized: 0, lost: 0, duplicated: 0, notifiedTwice: 0, redelivered: 0 };

const say = (line: string) => process.stdout.write(`e2e faults: ${line}\n`);
const seconds = (since: number) => ((Date.now() - since) / 1000).toFixed(1);
const containerName = (role: string) => gateway.containers!.containers[role]!.name;
const componentUrl = (component: string) => gateway.containers!.urls.components[component]!;

async function readiness(component: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`${componentUrl(component)}/readyz`, { signal: AbortSignal.timeout(10_000) }).catch(
    () => undefined,
  );
  return response ? { status: response.status, body: await response.text() } : { status: 0, body: 'no answer' };
}

/** A dependency's state in a /readyz body (`checks.<name>.status`). */
function checkOf(body: string, name: string): string | undefined {
  try {
    return (JSON.parse(body) as { checks?: Record<string, { status?: string }> }).checks?.[name]?.status;
  } catch {
    return undefined;
  }
}

/** Waits until a component's /readyz answers `status`; resolves with its body. */
async function readyzBecomes(component: string, status: number, timeoutMs: number): Promise<string> {
  let last = { status: 0, body: '' };
  await waitUntil(
    async () => (last = await readiness(component)).status === status,
    timeoutMs,
    () => `${component} /readyz ${status} (last: ${last.status} ${last.body})`,
  );
  return last.body;
}

/** The highest block the content watcher's scanner has scanned (its worker's watcher_scanner_block). */
async function scannedBlock(): Promise<number> {
  const text = await (await fetch(`${componentUrl('content-watcher-worker')}/metrics`)).text();
  const line = text.split('\n').find((entry) => entry.startsWith('watcher_scanner_block'));
  return line ? Number(line.split(' ').pop()) : -1;
}

/**
 * Posts broadcasts `<tag> #0` … `#<count - 1>`, 16 at a time; `onAccepted(n)` runs after the n-th 202. Resolves
 * with the accepted referenceIds by number and what was refused (a 503 while a dependency is gone is allowed).
 */
async function postNumbered(tag: string, count: number, onAccepted?: (n: number) => Promise<void> | void) {
  const published = new Date().toISOString();
  let acceptedSoFar = 0;
  const refused: string[] = [];
  const ids = await eachLimited(
    Array.from({ length: count }, (_, index) => index),
    16,
    async (number) => {
      const answer = await call(client.contentPublishing, 'POST', `/v1/content/${msaId}/broadcast`, {
        content: { content: `${tag} #${number}`, published },
      });
      if (answer.status !== 202) {
        refused.push(`#${number}: ${answer.status} ${JSON.stringify(answer.body)}`);
        return undefined;
      }
      await onAccepted?.(++acceptedSoFar);
      return { number, referenceId: answer.body.referenceId as string };
    },
  );
  const mine = ids.filter((id) => id !== undefined);
  accepted.set(tag, mine);
  return { ids: mine.map((id) => id.referenceId), refused };
}

/**
 * Every accepted broadcast of `tag` finalized, notified once at the content-publishing webhook, delivered once by
 * the content watcher; adds to the totals and resolves with the line's figures.
 */
async function settledOnce(tag: string, count: number, timeoutMs: number): Promise<string> {
  const ids = accepted.get(tag)!.map((id) => id.referenceId);
  const records = await client.settled(ids, timeoutMs);
  const finalized = records.filter((record) => record.state === 'finalized').length;
  // Outcome webhooks by request, by webhook-id: a delivery the receiver did not acknowledge before a crash is sent
  // again with the same webhook-id (at least once, as the webhook spec says; a receiver drops the repeat). A request
  // notified under two ids would be two notifications: that is the duplicate that must not happen.
  const notifications = new Map<string, Map<string, number>>();
  await waitUntil(
    async () => {
      notifications.clear();
      for (const delivery of await gateway.receiver.at(CONTENT_WEBHOOKS)) {
        const id = delivery.body.referenceId as string;
        const messages = notifications.get(id) ?? new Map<string, number>();
        const messageId = String(delivery.headers['webhook-id']);
        messages.set(messageId, (messages.get(messageId) ?? 0) + 1);
        notifications.set(id, messages);
      }
      return ids.every((id) => notifications.has(id));
    },
    timeoutMs,
    () => `${ids.filter((id) => notifications.has(id)).length} of ${ids.length} outcome webhooks of ${tag}`,
  );
  const notifiedTwice = ids.filter((id) => notifications.get(id)!.size > 1).length;
  const redelivered = ids
    .flatMap((id) => [...notifications.get(id)!.values()])
    .reduce((sum, times) => sum + times - 1, 0);
  // Only the accepted numbers can be delivered; count over them.
  const watched = await deliveredOnce({
    receiver: gateway.receiver,
    gateway: client,
    path: WATCHER_PATH,
    tag,
    count,
    numbers: accepted.get(tag)!.map((id) => id.number),
    timeoutMs,
    scannedBlock,
  });
  totals.accepted += ids.length;
  totals.finalized += finalized;
  totals.lost += watched.lost;
  totals.duplicated += watched.duplicated;
  totals.notifiedTwice += notifiedTwice;
  totals.redelivered += redelivered;
  expect({ finalized, notifiedTwice, lost: watched.lost, duplicated: watched.duplicated }).toEqual({
    finalized: ids.length,
    notifiedTwice: 0,
    lost: 0,
    duplicated: 0,
  });
  return `accepted ${ids.length}, finalized ${finalized}, notified twice ${notifiedTwice} (same webhook-id sent again: ${redelivered}), watcher lost ${watched.lost}, duplicated ${watched.duplicated}`;
}

beforeAll(async () => {
  await cryptoWaitReady();
  gateway = await startGatewayUnderTest({ mode: 'containers' });
  client = await gateway.client();
  const registered = await call(client.contentWatcher, 'POST', '/v1/webhooks', {
    url: gateway.receiver.destination(WATCHER_PATH),
    announcementTypes: ['broadcast'],
  });
  expect(registered.status).toBe(201);
  const { referenceId } = await client.signUp(`faults${randomBytes(3).toString('hex')}`);
  const webhook = await gateway.receiver.notificationOf(ACCOUNT_WEBHOOKS, referenceId, gateway.webhookSecret);
  msaId = String(webhook.body.msaId);
}, 1_200_000);

afterAll(async () => {
  await client?.close();
  await gateway?.stop();
  say(
    `accepted ${totals.accepted}, finalized ${totals.finalized}, lost ${totals.lost}, duplicated ${totals.duplicated}, notified twice ${totals.notifiedTwice} (same webhook-id sent again: ${totals.redelivered})`,
  );
}, 120_000);

test('docker kill of the content-publishing worker after 1,000 of 2,000 broadcasts, then docker start: all finalized, notified and delivered once', async () => {
  const started = Date.now();
  const tag = `kill-${randomBytes(3).toString('hex')}`;
  const worker = containerName('content-publishing-worker');
  let killed: Promise<void> | undefined;
  const { ids, refused } = await postNumbered(tag, 2000, (n) => {
    if (n === 1000)
      killed = (async () => {
        await docker(['kill', worker]);
        await docker(['start', worker]);
      })();
  });
  await killed;
  expect(refused).toEqual([]);
  expect(ids).toHaveLength(2000);
  say(
    `worker killed after 1,000 accepted and started again: ${await settledOnce(tag, 2000, 300_000)} in ${seconds(started)} s`,
  );
}, 600_000);

test('docker restart of Redis: the apis ready again, broadcasts around it finalized, notified and delivered once', async () => {
  const started = Date.now();
  const tag = `redis-${randomBytes(3).toString('hex')}`;
  await docker(['restart', '--time', '1', containerName('redis')]);
  // Readiness checks Redis every few seconds, so right after the restart it may still answer 200 while the api's
  // own connection reconnects: until then a broadcast gets a clean 503 and nothing is kept. Once one is accepted,
  // every one is.
  const firstTag = `${tag}-first`;
  const refusedBefore: string[] = [];
  await waitUntil(
    async () => {
      const { ids, refused } = await postNumbered(firstTag, 1);
      refusedBefore.push(...refused);
      return ids.length === 1;
    },
    60_000,
    'a broadcast accepted after the restart',
  );
  for (const refusal of refusedBefore) expect(refusal).toMatch(/^#0: 503 .*Redis is unreachable/);
  for (const component of ['account-api', 'content-publishing-api', 'content-watcher-api'])
    await readyzBecomes(component, 200, 60_000);
  const { refused } = await postNumbered(tag, 50);
  expect(refused).toEqual([]);
  await settledOnce(firstTag, 1, 120_000);
  say(
    `Redis restarted: ${refusedBefore.length} refused with 503 while reconnecting, then ${await settledOnce(tag, 50, 120_000)} in ${seconds(started)} s`,
  );
}, 300_000);

/**
 * A dependency gone for OUTAGE_MS (`down`, then `up`, container runtime commands): the content-publishing api must
 * answer 503 with that dependency's check down while it is gone, and 200 once it is back. Twenty broadcasts are
 * posted meanwhile; resolves with the refused ones and the line to print.
 */
async function outage(options: { what: string; check: string; down: string[]; up: string[]; tag: string }) {
  const started = Date.now();
  await docker(options.down);
  let gone = true;
  try {
    const posting = postNumbered(options.tag, 20);
    const body = await readyzBecomes('content-publishing-api', 503, OUTAGE_MS);
    expect(checkOf(body, options.check)).toBe('down');
    const unready = seconds(started);
    const { refused } = await posting;
    await waitUntil(async () => Date.now() - started >= OUTAGE_MS, OUTAGE_MS + 5_000, 'the outage');
    await docker(options.up);
    gone = false;
    await readyzBecomes('content-publishing-api', 200, 60_000);
    const line = `${options.what} 30 s: 503 (${options.check} down) after ${unready} s, ready ${seconds(started)} s after it went`;
    return { refused, line };
  } finally {
    if (gone) await docker(options.up);
  }
}

test('docker pause of the chain for 30 s: readiness 503 naming the chain, then 200; broadcasts accepted meanwhile finalized, notified and delivered once', async () => {
  const tag = `pause-${randomBytes(3).toString('hex')}`;
  const chain = containerName('chain');
  const { refused, line } = await outage({
    what: 'chain paused',
    check: 'chain',
    down: ['pause', chain],
    up: ['unpause', chain],
    tag,
  });
  say(line);
  // The api takes broadcasts without the chain (they wait in Redis for the worker).
  expect(refused).toEqual([]);
  say(`chain paused: ${await settledOnce(tag, 20, 180_000)}`);
}, 300_000);

test('Kubo stopped for 30 s: readiness 503 naming IPFS, then 200; broadcasts accepted meanwhile finalized, notified and delivered once', async () => {
  const tag = `kubo-${randomBytes(3).toString('hex')}`;
  const kubo = containerName('kubo');
  const { refused, line } = await outage({
    what: 'Kubo stopped',
    check: 'ipfs',
    down: ['stop', kubo],
    up: ['start', kubo],
    tag,
  });
  say(line);
  // Kubo's gateway port is published anew by `docker start`: a client on the new one reads the Notes.
  const port = (await docker(['port', kubo, '8080/tcp'])).trim().split('\n')[0]!.split(':').pop();
  await client.close();
  client = await GatewayClient.connect({ ...gateway.endpoints, ipfsGateway: `http://127.0.0.1:${port}` });
  say(`Kubo stopped: ${refused.length} refused while it was gone; ${await settledOnce(tag, 20, 180_000)}`);
}, 300_000);
