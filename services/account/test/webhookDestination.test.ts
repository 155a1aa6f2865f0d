import { waitUntil } from '@frequency-gateway/devstack';
import { Queue } from 'bullmq';
import { KEYSPACE, useAccountStack } from './support/stack.js';

// The account worker with WEBHOOK_BASE_URL on this machine's loopback interface and no OUTBOUND_ALLOWED_DESTINATIONS:
// what an operator gets who points it at an internal address without opening it.
const PASSWORD = 'app-pass-0xbeef';
const logs: string[] = [];
const stack = useAccountStack({
  workerEnv: (receiver) => ({
    WEBHOOK_BASE_URL: `http://app-user:${PASSWORD}@127.0.0.1:${receiver.port}`,
    OUTBOUND_ALLOWED_DESTINATIONS: '',
  }),
  workerLogs: logs,
});

const RULE = 'destinations allowed: public addresses and OUTBOUND_ALLOWED_DESTINATIONS';

test('a WEBHOOK_BASE_URL the outbound policy refuses gets no attempt; the worker says why once, health names the rule and no secret', async () => {
  const worker = stack.workers[0]!;
  const lines = () =>
    logs.flatMap((line) =>
      line.startsWith('{') ? [JSON.parse(line) as { msg: string; [field: string]: unknown }] : [],
    );
  const atStart = lines().filter((line) => line.msg.startsWith('WEBHOOK_BASE_URL is refused'));
  expect(atStart).toEqual([
    expect.objectContaining({
      level: 'error',
      reason: `127.0.0.1 is a loopback address; ${RULE}`,
      webhookBaseUrl: `http://***@127.0.0.1:${stack.receiver.port}/`,
    }),
  ]);

  // A sign-up goes through; its outcome notification is a dead letter without a request.
  await stack.register('sr25519');
  const webhooks = new Queue('webhookQueue', { connection: { url: stack.redis.url }, prefix: `${KEYSPACE}:bull` });
  try {
    await waitUntil(async () => (await webhooks.getFailedCount()) === 1, 30_000, 'the dead-lettered notification');
    const [job] = await webhooks.getFailed();
    expect(job?.failedReason).toBe(`destination refused: 127.0.0.1 is a loopback address; ${RULE}`);
    expect(job?.attemptsMade).toBe(1);
  } finally {
    await webhooks.close();
  }
  expect(stack.receiver.received).toHaveLength(0);
  const refusals = lines().filter((line) => line.msg.startsWith('webhook destination refused'));
  expect(refusals).toEqual([expect.objectContaining({ reason: expect.stringContaining(RULE) })]);

  const ready = await fetch(`${worker.url}/readyz`);
  expect(ready.status).toBe(200);
  const health = await (await fetch(`${worker.url}/healthz`)).text();
  expect(JSON.parse(health)).toMatchObject({
    checks: {
      'webhook-destination': {
        status: 'down',
        required: false,
        target: `127.0.0.1:${stack.receiver.port}`,
        error: `127.0.0.1 is a loopback address; ${RULE}`,
      },
    },
  });
  for (const text of [health, logs.join('\n')]) {
    expect(text).not.toContain(PASSWORD);
    expect(text).not.toContain('app-user');
  }
}, 120_000);
