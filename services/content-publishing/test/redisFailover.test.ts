import {
  callJson,
  killPrimaryUnderLoad,
  startWebhookReceiver,
  waitUntil,
  type WebhookReceiver,
} from '@frequency-gateway/devstack';
import type { ComponentProcess } from '@frequency-gateway/devstack/gateway';
import { startPipeline, type PipelineStack } from './support/pipeline.js';

// The Redis primary dies (kill -9) in the middle of broadcasts posted at a steady rate, on a primary with four
// replicas and three Sentinels (REDIS_SENTINELS); in the second test the replica the Sentinels promote dies too, as
// soon as they name it. Two apis take the posts in turn: one answers 202 only once a replica has the request
// (REDIS_DURABILITY=replicated), the other once the primary has it. Every component follows the failovers without
// a restart. The plain api's losses are figures, not checked.
//
// Before the worker confirmed its own writes too (REDIS_DURABILITY in workers, and the tracker's scan position
// moved only from where it stood), every durable 202 was finalized but a few webhooks never came: the new primary
// had a request's end but not the webhook queued after it, and the scan went on past the block.
//
// Before the platform's Sentinel connections were fixed (no ioredis failover detector, see redis/connection.ts),
// one run in five, more under load, left a connection of the worker ended for good: its readiness stayed 503 on
// "Connection is closed.", or every request accepted after the kill stayed unfinished.
//
// Scale: 1,500 broadcasts at 25 a second by default, not the 5,000 the issue names: on a shared two-core machine
// the stack alone (devchain, Kubo, six Redis processes, three components) takes minutes to start under load, and
// 5,000 at a rate the api and the devchain keep up with there adds more than two minutes of posting to every
// `make test`. FAILOVER_BROADCASTS=5000 runs the scale.
const RATE_PER_SECOND = 25;
const BROADCASTS = Number(process.env.FAILOVER_BROADCASTS ?? 1_500);
/** The kill comes after this many posts: a third of the way. */
const KILL_AFTER = Math.round(BROADCASTS / 3);
const SECRET = 'failover-webhook-secret-0123456789';

let stack: PipelineStack;
/** An api that answers 202 only once a replica has the request; `stack.api` answers once the primary has it. */
let durable: ComponentProcess;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  stack = await startPipeline({
    redis: 'sentinel',
    // The worker confirms what each job wrote, and each transaction's record, on a replica before it goes on.
    workerEnv: {
      WEBHOOK_BASE_URL: receiver.url,
      WEBHOOK_SECRET: SECRET,
      BATCH_MAX_COUNT: '200',
      REDIS_DURABILITY: 'replicated',
    },
  });
  durable = await stack.startApi({ REDIS_DURABILITY: 'replicated', REDIS_DURABILITY_TIMEOUT_MS: '1000' });
}, 420_000);
afterAll(async () => {
  await stack?.stop();
  await receiver?.stop();
});

interface Posted {
  api: 'durable' | 'plain';
  status: number;
  referenceId?: string;
}

/** `primaryKills` primaries killed in a row mid-traffic (each promoted one as soon as it is named); checks and figures. */
async function drill(primaryKills: number): Promise<void> {
  const startedAt = Date.now();
  const apis = { durable, plain: stack.api };
  const components = [durable, stack.api, ...stack.workers];
  const pids = components.map((component) => component.pid);

  // Readiness of the apis and the worker is polled through the whole run.
  const {
    answers: posted,
    killedAt,
    primary,
    readiness,
  } = await killPrimaryUnderLoad<Posted>({
    group: stack.sentinel!,
    componentUrls: components.map((component) => component.url),
    count: BROADCASTS,
    ratePerSecond: RATE_PER_SECOND,
    killAfter: KILL_AFTER,
    primaryKills,
    send: (index) => {
      const api = index % 2 === 0 ? 'durable' : 'plain';
      return callJson(apis[api].url, 'POST', '/v1/content/2/broadcast', {
        content: { content: `broadcast ${index}`, published: '2026-11-21T10:00:00.000Z' },
      }).then(
        (answer) => ({ api, status: answer.status, referenceId: answer.body?.referenceId as string | undefined }),
        () => ({ api, status: 0 }),
      );
    },
  });

  const acknowledged = (api: Posted['api']) =>
    posted.filter((post) => post.api === api && post.status === 202).map((post) => post.referenceId as string);
  const durableIds = acknowledged('durable');
  const plainIds = acknowledged('plain');
  // Every acknowledged durable request ends finalized, and its webhook arrives once: one notification (one
  // webhook-id) per request. A delivery whose completion went with the old primary is sent again with the same
  // webhook-id, which receivers drop (the webhook contract); those are counted apart.
  // One that never settles is counted as unfinished (and fails the checks) rather than ending the test unmeasured.
  const records = await stack
    .settled(durableIds, 180_000)
    .catch(() => Promise.all(durableIds.map((id) => stack.request(id))));
  const webhookCounts = () => {
    const ids = new Map<string, Set<string>>();
    const deliveries = new Map<string, number>();
    for (const webhook of receiver.received) {
      const id = (webhook.body as { referenceId?: string }).referenceId ?? '';
      ids.set(id, (ids.get(id) ?? new Set()).add(webhook.headers['webhook-id'] ?? ''));
      deliveries.set(id, (deliveries.get(id) ?? 0) + 1);
    }
    return { ids, deliveries, notices: (id: string) => ids.get(id)?.size ?? 0 };
  };
  await waitUntil(
    async () => {
      const { notices } = webhookCounts();
      return durableIds.every((id) => notices(id) >= 1);
    },
    60_000,
    'a webhook for every durable 202',
  ).catch(() => undefined);

  // Without durability: what the primary acknowledged and the failover lost (no record, or never finalized).
  // Each plain request is read until it is final or known lost, for at most a minute after the durable ones.
  const plainFinal = new Map<string, string>();
  const plainDeadline = Date.now() + 60_000;
  while (plainFinal.size < plainIds.length && Date.now() < plainDeadline) {
    for (const id of plainIds) {
      if (plainFinal.has(id)) continue;
      const record = await stack.request(id);
      if (!record) plainFinal.set(id, 'lost');
      else if (record.state === 'finalized' || record.state === 'failed') plainFinal.set(id, record.state);
    }
    if (plainFinal.size < plainIds.length) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const plainStates = plainIds.map((id) => plainFinal.get(id) ?? 'unfinished');
  const webhooks = webhookCounts();
  const counts = {
    primaryKills,
    durationMs: Date.now() - startedAt,
    posted: posted.length,
    durable: {
      acknowledged: durableIds.length,
      refused503: posted.filter((post) => post.api === 'durable' && post.status === 503).length,
      finalized: records.filter((record) => record?.state === 'finalized').length,
      lost: records.filter((record) => !record).length,
      unfinished: records.filter((record) => record && record.state !== 'finalized' && record.state !== 'failed')
        .length,
      finalizedTwice: records.filter(
        (record) => (record?.history.filter((s) => s.state === 'finalized').length ?? 0) > 1,
      ).length,
      notNotified: durableIds.filter((id) => webhooks.notices(id) === 0).length,
      notifiedTwice: durableIds.filter((id) => webhooks.notices(id) > 1).length,
      sentAgainSameId: durableIds.filter((id) => (webhooks.deliveries.get(id) ?? 0) > webhooks.notices(id)).length,
    },
    plain: {
      acknowledged: plainIds.length,
      refused503: posted.filter((post) => post.api === 'plain' && post.status === 503).length,
      finalized: plainStates.filter((state) => state === 'finalized').length,
      lost: plainStates.filter((state) => state === 'lost').length,
      neverFinalized: plainStates.filter((state) => state !== 'finalized' && state !== 'lost').length,
      notifiedTwice: plainIds.filter((id) => webhooks.notices(id) > 1).length,
      sentAgainSameId: plainIds.filter((id) => (webhooks.deliveries.get(id) ?? 0) > webhooks.notices(id)).length,
    },
    primary,
    readiness: readiness.figuresSince(killedAt),
  };
  process.stdout.write(`Redis failover figures: ${JSON.stringify(counts)}\n`);

  expect(counts.durable.acknowledged).toBeGreaterThan(0);
  expect(counts.durable.finalized).toBe(durableIds.length);
  expect(counts.durable.finalizedTwice).toBe(0);
  expect(counts.durable.notNotified).toBe(0);
  expect(counts.durable.notifiedTwice).toBe(0);
  // Readiness went 503 during the failover and came back; no component was restarted.
  expect(counts.readiness.unavailablePolls).toBeGreaterThan(0);
  expect(readiness.polls.at(-1)?.status).toBe(200);
  expect(components.map((component) => component.pid)).toEqual(pids);
  for (const component of components) expect(() => process.kill(component.pid, 0)).not.toThrow();
}

test(
  'kill -9 of the primary mid-traffic: every durable 202 finalized and notified once; readiness 503 then back; nothing restarted',
  () => drill(1),
  900_000,
);

test(
  'kill -9 of the primary mid-traffic, then of the replica promoted in its place: every durable 202 finalized and notified once; readiness 503 then back; nothing restarted',
  () => drill(2),
  900_000,
);
