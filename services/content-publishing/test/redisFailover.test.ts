import { startWebhookReceiver, waitUntil, type WebhookReceiver } from '@frequency-gateway/devstack';
import { startPipeline, type PipelineStack } from './support/pipeline.js';
import { call } from './support/stack.js';

// The Redis primary dies (kill -9) in the middle of broadcasts posted at a steady rate, on a primary with two
// replicas and three Sentinels (REDIS_SENTINELS). Two apis take the posts in turn: one answers 202 only once a
// replica has the request (REDIS_DURABILITY=replicated), the other once the primary has it. Every component
// follows the failover without a restart. Scaled down from 5,000 broadcasts to what fits in minutes here.
const RATE_PER_SECOND = 10;
const DURATION_MS = 16_000;
const KILL_AFTER_MS = 5_000;
const SECRET = 'failover-webhook-secret-0123456789';

let stack: PipelineStack;
let receiver: WebhookReceiver;
/** The readiness poll runs while this is true; afterAll ends it even when the test failed half-way. */
let watching = true;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  stack = await startPipeline({
    redis: 'sentinel',
    workerEnv: { WEBHOOK_BASE_URL: receiver.url, WEBHOOK_SECRET: SECRET, BATCH_MAX_COUNT: '200' },
  });
}, 300_000);
afterAll(async () => {
  watching = false;
  await stack?.stop();
  await receiver?.stop();
});

interface Posted {
  api: 'durable' | 'plain';
  status: number;
  referenceId?: string;
}

test('kill -9 of the primary mid-traffic: every durable 202 finalized and notified once; readiness 503 then back; nothing restarted', async () => {
  const sentinel = stack.sentinel!;
  const durable = await stack.startApi({ REDIS_DURABILITY: 'replicated', REDIS_DURABILITY_TIMEOUT_MS: '1000' });
  const apis = { durable, plain: stack.api };
  const components = [durable, stack.api, ...stack.workers];
  const pids = components.map((component) => component.pid);

  // Readiness of the apis and the worker, every 100 ms, through the whole run.
  const readiness: number[] = [];
  const watch = (async () => {
    while (watching) {
      const statuses = await Promise.all(
        components.map((component) =>
          fetch(`${component.url}/readyz`, { signal: AbortSignal.timeout(2000) }).then(
            (response) => response.status,
            () => 0,
          ),
        ),
      );
      readiness.push(Math.max(...statuses));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();

  const posted: Posted[] = [];
  const sends: Promise<void>[] = [];
  const oldPrimary = await sentinel.primaryPort();
  const start = Date.now();
  let killed = false;
  for (let index = 0; Date.now() - start < DURATION_MS; index++) {
    const next = start + (index * 1000) / RATE_PER_SECOND;
    if (next > Date.now()) await new Promise((resolve) => setTimeout(resolve, next - Date.now()));
    if (!killed && Date.now() - start >= KILL_AFTER_MS) {
      killed = true;
      await sentinel.servers[0]!.kill('SIGKILL');
    }
    const api = index % 2 === 0 ? 'durable' : 'plain';
    sends.push(
      call(apis[api].url, 'POST', '/v1/content/2/broadcast', {
        content: { content: `broadcast ${index}`, published: '2026-11-21T10:00:00.000Z' },
      }).then(
        (answer) => {
          posted.push({ api, status: answer.status, referenceId: answer.body?.referenceId as string | undefined });
        },
        () => {
          posted.push({ api, status: 0 });
        },
      ),
    );
  }
  await Promise.all(sends);
  const newPrimary = await waitUntil(
    async () => {
      const port = await sentinel.primaryPort();
      return port !== oldPrimary && port;
    },
    60_000,
    'the Sentinels to name a new primary',
  );
  let notReady: string[] = [];
  await waitUntil(
    async () => {
      const answers = await Promise.all(
        components.map(async (component) => {
          const response = await fetch(`${component.url}/readyz`);
          return response.status === 200 ? '' : `${component.url}: ${await response.text()}`;
        }),
      );
      notReady = answers.filter(Boolean);
      return notReady.length === 0;
    },
    60_000,
    () => `every component ready again; not ready: ${notReady.join(' | ')}`,
  );
  watching = false;
  await watch;

  const acknowledged = (api: Posted['api']) =>
    posted.filter((post) => post.api === api && post.status === 202).map((post) => post.referenceId as string);
  const durableIds = acknowledged('durable');
  const plainIds = acknowledged('plain');
  // Every acknowledged durable request ends finalized, and its webhook arrives once.
  const records = await stack.settled(durableIds, 180_000);
  const webhooksOf = (id: string) =>
    receiver.received.filter((webhook) => (webhook.body as { referenceId?: string }).referenceId === id).length;
  await waitUntil(async () => durableIds.every((id) => webhooksOf(id) >= 1), 60_000, 'a webhook for every durable 202');

  // Without durability: what the primary acknowledged and the failover lost (no record, or never finalized).
  const plainFinal = await Promise.all(
    plainIds.map(async (id) => {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const record = await stack.request(id);
        if (!record || record.state === 'finalized' || record.state === 'failed' || Date.now() > deadline)
          return record?.state ?? 'lost';
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }),
  );
  const counts = {
    posted: posted.length,
    durable: {
      acknowledged: durableIds.length,
      refused503: posted.filter((post) => post.api === 'durable' && post.status === 503).length,
      finalized: records.filter((record) => record.state === 'finalized').length,
      finalizedTwice: records.filter((record) => record.history.filter((s) => s.state === 'finalized').length > 1)
        .length,
      webhooksTwice: durableIds.filter((id) => webhooksOf(id) > 1).length,
    },
    plain: {
      acknowledged: plainIds.length,
      refused503: posted.filter((post) => post.api === 'plain' && post.status === 503).length,
      lost: plainFinal.filter((state) => state === 'lost').length,
      neverFinalized: plainFinal.filter((state) => state !== 'finalized' && state !== 'lost').length,
    },
    primary: { before: oldPrimary, after: newPrimary },
    readiness: { notReadyPolls: readiness.filter((status) => status !== 200).length, polls: readiness.length },
  };
  process.stdout.write(`Redis failover figures: ${JSON.stringify(counts)}\n`);

  expect(counts.durable.acknowledged).toBeGreaterThan(0);
  expect(counts.durable.finalized).toBe(durableIds.length);
  expect(counts.durable.finalizedTwice).toBe(0);
  expect(counts.durable.webhooksTwice).toBe(0);
  // Readiness went 503 during the failover and came back; no component was restarted.
  expect(counts.readiness.notReadyPolls).toBeGreaterThan(0);
  expect(readiness[readiness.length - 1]).toBe(200);
  expect(components.map((component) => component.pid)).toEqual(pids);
  for (const component of components) expect(() => process.kill(component.pid, 0)).not.toThrow();
}, 600_000);
