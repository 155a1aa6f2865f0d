// Faults against the six components in containers, made through the container runtime (the default), or against
// local processes, made with signals (E2E_STACK=local): a content-publishing worker killed in the middle of a run of
// broadcasts and started again, Redis restarted, the chain paused for 30 s, Kubo stopped for 30 s, the webhook
// receiver down for a minute. Every accepted request must be finalized once, notified once and delivered once by
// the content watcher; the apis' readiness must say 503 while a dependency is gone and 200 after. Prints one line
// per fault and the counts, starting with `e2e faults`.
import { randomBytes } from 'node:crypto';
import { callJson, eachLimited, waitUntil } from '@frequency-gateway/devstack';
import { cryptoWaitReady } from '@polkadot/util-crypto';
import { deliveredOnce } from '../src/clients/delivered.js';
import { GatewayClient } from '../src/clients/gatewayClient.js';
import {
  ACCOUNT_WEBHOOKS,
  CONTENT_WEBHOOKS,
  startGatewayUnderTest,
  type GatewayUnderTest,
} from '../src/journeys/gatewayUnderTest.js';

const WATCHER_PATH = '/watcher/broadcasts';
/** How long the chain stays paused and Kubo stopped. */
const OUTAGE_MS = 30_000;
/**
 * How long the webhook receiver stays down: the minute the issue names. With the default backoff (1 s doubled per
 * attempt) a webhook first refused at its start is tried again 5 times within it (after 1, 3, 7, 15, 31 s).
 */
const RECEIVER_DOWN_MS = 60_000;
/** The components that send webhooks: outcomes of sign-ups and broadcasts, and the watcher's announcements. */
const WEBHOOK_SENDERS = ['account-worker', 'content-publishing-worker', 'content-watcher-worker'];

let gateway: GatewayUnderTest;
let client: GatewayClient;
let msaId: string;
/** Every broadcast accepted (202) so far, by tag, with its number. */
const accepted = new Map<string, { number: number; referenceId: string }[]>();
const totals = { accepted: 0, finalized: 0, lost: 0, duplicated: 0, notifiedTwice: 0, redelivered: 0 };

const say = (line: string) => process.stdout.write(`e2e faults (${gateway?.mode}): ${line}\n`);
/**
 * Broadcasts of the worker-kill test, the kill after half of them: several batches queued, one being signed and
 * others waiting when the worker dies (FAULTS_KILL_BROADCASTS sets the number).
 */
const KILL_TOTAL = Number(process.env.FAULTS_KILL_BROADCASTS ?? 600);
const KILL_AT = Math.floor(KILL_TOTAL / 2);
const seconds = (since: number) => ((Date.now() - since) / 1000).toFixed(1);
const componentUrl = (component: string) => gateway.disruptions.componentUrl(component);

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
      const answer = await callJson(client.contentPublishing, 'POST', `/v1/content/${msaId}/broadcast`, {
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
 * Waits until every request of `ids` was notified at `path`; resolves with how many were notified under two
 * webhook-ids and how many deliveries repeated a webhook-id. A delivery the receiver did not acknowledge (it was
 * down, or the sender crashed before it recorded the 200) is sent again with the same webhook-id (at least once, as
 * the webhook spec says; a receiver drops the repeat). A request notified under two ids would be two notifications:
 * that is the duplicate that must not happen.
 */
async function notifiedOnce(path: string, ids: string[], what: string, timeoutMs: number) {
  const notifications = new Map<string, Map<string, number>>();
  await waitUntil(
    async () => {
      notifications.clear();
      for (const delivery of await gateway.receiver.at(path)) {
        const id = delivery.body.referenceId as string;
        const messages = notifications.get(id) ?? new Map<string, number>();
        const messageId = String(delivery.headers['webhook-id']);
        messages.set(messageId, (messages.get(messageId) ?? 0) + 1);
        notifications.set(id, messages);
      }
      return ids.every((id) => notifications.has(id));
    },
    timeoutMs,
    () => `${ids.filter((id) => notifications.has(id)).length} of ${ids.length} ${what}`,
  );
  const notifiedTwice = ids.filter((id) => notifications.get(id)!.size > 1).length;
  const redelivered = ids
    .flatMap((id) => [...notifications.get(id)!.values()])
    .reduce((sum, times) => sum + times - 1, 0);
  return { notifiedTwice, redelivered };
}

/**
 * Every accepted broadcast of `tag` finalized, notified once at the content-publishing webhook, delivered once by
 * the content watcher; adds to the totals and resolves with the line's figures.
 */
async function settledOnce(tag: string, count: number, timeoutMs: number): Promise<string> {
  const ids = accepted.get(tag)!.map((id) => id.referenceId);
  const records = await client.settled(ids, timeoutMs).catch(async (error: unknown) => {
    const log = await gateway.disruptions.logTail('content-publishing-worker');
    throw new Error(`${String(error)}\ncontent-publishing-worker's last lines:\n${log}`, { cause: error });
  });
  const finalized = records.filter((record) => record.state === 'finalized').length;
  const { notifiedTwice, redelivered } = await notifiedOnce(
    CONTENT_WEBHOOKS,
    ids,
    `outcome webhooks of ${tag}`,
    timeoutMs,
  );
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
  return `accepted ${ids.length}, finalized ${finalized}, notified twice ${notifiedTwice} (same webhook-id sent again: ${redelivered}), watcher lost ${watched.lost}, duplicated ${watched.duplicated} (same webhook-id sent again: ${watched.redelivered})`;
}

beforeAll(async () => {
  await cryptoWaitReady();
  // E2E_STACK=local makes the faults with signals to local processes; otherwise through the container runtime.
  gateway = await startGatewayUnderTest({ mode: process.env.E2E_STACK === 'local' ? 'local' : 'containers' });
  client = await gateway.client();
  const registered = await callJson(client.contentWatcher, 'POST', '/v1/webhooks', {
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

test(`the content-publishing worker killed (docker kill, SIGKILL) after ${KILL_AT} of ${KILL_TOTAL} broadcasts, then started again: all finalized, notified and delivered once`, async () => {
  const started = Date.now();
  const tag = `kill-${randomBytes(3).toString('hex')}`;
  let killed: Promise<void> | undefined;
  const { ids, refused } = await postNumbered(tag, KILL_TOTAL, (n) => {
    if (n === KILL_AT) killed = gateway.disruptions.killAndStart('content-publishing-worker');
  });
  await killed;
  expect(refused).toEqual([]);
  expect(ids).toHaveLength(KILL_TOTAL);
  say(
    `worker killed after ${KILL_AT} accepted and started again: ${await settledOnce(tag, KILL_TOTAL, 300_000)} in ${seconds(started)} s`,
  );
}, 600_000);

test('Redis restarted (docker restart; SIGTERM and start): the apis ready again, broadcasts around it finalized, notified and delivered once', async () => {
  const started = Date.now();
  const tag = `redis-${randomBytes(3).toString('hex')}`;
  await gateway.disruptions.restartRedis();
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
 * A dependency gone for OUTAGE_MS (`down`, then `up`): the content-publishing api must answer 503 with that
 * dependency's check down while it is gone, and 200 once it is back. Twenty broadcasts are posted meanwhile;
 * resolves with the refused ones and the line to print.
 */
async function outage(options: {
  what: string;
  check: string;
  down: () => Promise<void>;
  up: () => Promise<void>;
  tag: string;
}) {
  const started = Date.now();
  await options.down();
  let gone = true;
  try {
    const posting = postNumbered(options.tag, 20);
    const body = await readyzBecomes('content-publishing-api', 503, OUTAGE_MS);
    expect(checkOf(body, options.check)).toBe('down');
    const unready = seconds(started);
    const { refused } = await posting;
    await waitUntil(async () => Date.now() - started >= OUTAGE_MS, OUTAGE_MS + 5_000, 'the outage');
    await options.up();
    gone = false;
    await readyzBecomes('content-publishing-api', 200, 60_000);
    const line = `${options.what} 30 s: 503 (${options.check} down) after ${unready} s, ready ${seconds(started)} s after it went`;
    return { refused, line };
  } finally {
    if (gone) await options.up();
  }
}

test('the chain paused for 30 s (docker pause, SIGSTOP): readiness 503 naming the chain, then 200; broadcasts accepted meanwhile finalized, notified and delivered once', async () => {
  const tag = `pause-${randomBytes(3).toString('hex')}`;
  const { refused, line } = await outage({
    what: 'chain paused',
    check: 'chain',
    down: gateway.disruptions.pauseChain,
    up: gateway.disruptions.resumeChain,
    tag,
  });
  say(line);
  // The api takes broadcasts without the chain (they wait in Redis for the worker).
  expect(refused).toEqual([]);
  say(`chain paused: ${await settledOnce(tag, 20, 180_000)}`);
}, 300_000);

test('Kubo stopped for 30 s: readiness 503 naming IPFS, then 200; broadcasts accepted meanwhile finalized, notified and delivered once', async () => {
  const tag = `kubo-${randomBytes(3).toString('hex')}`;
  const { refused, line } = await outage({
    what: 'Kubo stopped',
    check: 'ipfs',
    down: gateway.disruptions.stopIpfs,
    up: gateway.disruptions.startIpfs,
    tag,
  });
  say(line);
  // A Kubo container started again publishes its gateway port anew: a client on the new one reads the Notes.
  await client.close();
  client = await GatewayClient.connect(gateway.endpoints);
  say(`Kubo stopped: ${refused.length} refused while it was gone; ${await settledOnce(tag, 20, 180_000)}`);
}, 300_000);

/** webhook_deliveries_total of each webhook sender, by outcome (delivered, retry, dead_letter), from its /metrics. */
async function webhookAttempts(): Promise<Record<string, Record<string, number>>> {
  const bySender: Record<string, Record<string, number>> = {};
  for (const sender of WEBHOOK_SENDERS) {
    const text = await (await fetch(`${componentUrl(sender)}/metrics`)).text();
    const outcomes: Record<string, number> = { delivered: 0, retry: 0, dead_letter: 0 };
    // e.g. webhook_deliveries_total{outcome="retry",component="account-worker"} 3
    for (const [, labels, value] of text.matchAll(/^webhook_deliveries_total\{([^}]*)\} (\S+)$/gm)) {
      const outcome = /outcome="(\w+)"/.exec(labels!)?.[1];
      if (outcome) outcomes[outcome] = Number(value);
    }
    bySender[sender] = outcomes;
  }
  return bySender;
}

/** What each sender counted between two readings, summed: delivered, retry, dead_letter. */
function attemptsBetween(
  before: Record<string, Record<string, number>>,
  after: Record<string, Record<string, number>>,
) {
  const sum = { delivered: 0, retry: 0, dead_letter: 0 };
  for (const sender of WEBHOOK_SENDERS)
    for (const outcome of Object.keys(sum) as (keyof typeof sum)[])
      sum[outcome] += after[sender]![outcome]! - before[sender]![outcome]!;
  return sum;
}

test('the webhook receiver down a minute (docker stop, SIGTERM) while broadcasts are finalized and users sign up: every webhook delivered once after it is back, none lost', async () => {
  const started = Date.now();
  const tag = `receiver-${randomBytes(3).toString('hex')}`;
  const before = await webhookAttempts();
  await gateway.disruptions.stopReceiver();
  let down = true;
  try {
    // Broadcasts and sign-ups (one key of each kind) while nobody takes their webhooks.
    const { ids, refused } = await postNumbered(tag, 20);
    expect(refused).toEqual([]);
    const signUps = await Promise.all([
      client.signUp(`down${randomBytes(3).toString('hex')}`, undefined, 'sr25519'),
      client.signUp(`down${randomBytes(3).toString('hex')}`, undefined, 'ethereum'),
    ]);
    const signUpIds = signUps.map((signUp) => signUp.referenceId);
    // Finalized while the receiver is down: only their webhooks wait.
    const records = await client.settled(ids, RECEIVER_DOWN_MS);
    expect(records.filter((record) => record.state === 'finalized')).toHaveLength(ids.length);
    // Every sender has tried and failed (the sign-ups' outcomes, the broadcasts' outcomes, the watcher's
    // announcements of them) before the receiver comes back.
    let during = before;
    await waitUntil(
      async () => {
        during = await webhookAttempts();
        return WEBHOOK_SENDERS.every((sender) => during[sender]!.retry! > before[sender]!.retry!);
      },
      RECEIVER_DOWN_MS,
      () =>
        `a failed attempt of every webhook sender (retries so far: ${JSON.stringify(attemptsBetween(before, during))})`,
    );
    await waitUntil(
      async () => Date.now() - started >= RECEIVER_DOWN_MS,
      RECEIVER_DOWN_MS + 5_000,
      'the minute the receiver is down',
    );
    const retriedWhileDown = attemptsBetween(before, await webhookAttempts()).retry;
    await gateway.disruptions.startReceiver();
    down = false;
    const downFor = seconds(started);

    // Back: every outcome and announcement delivered, once.
    const signedUp = await notifiedOnce(ACCOUNT_WEBHOOKS, signUpIds, 'sign-up webhooks', 240_000);
    const line = await settledOnce(tag, 20, 240_000);
    const after = await webhookAttempts();
    const attempts = attemptsBetween(before, after);
    expect(attempts.dead_letter).toBe(0);
    expect(signedUp.notifiedTwice).toBe(0);
    say(
      `receiver down ${downFor} s (${retriedWhileDown} attempts failed meanwhile): ${signUpIds.length} sign-ups notified, twice ${signedUp.notifiedTwice} (same webhook-id again: ${signedUp.redelivered}); broadcasts ${line}; webhooks delivered ${attempts.delivered}, retried ${attempts.retry}, dead letters ${attempts.dead_letter} in ${seconds(started)} s`,
    );
  } finally {
    if (down) await gateway.disruptions.startReceiver();
  }
}, 600_000);
