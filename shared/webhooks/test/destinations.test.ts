import {
  type LocalRedis,
  startRedisServer,
  startWebhookReceiver,
  waitUntil,
  type WebhookReceiver,
} from '@frequency-gateway/devstack';
import {
  JobQueues,
  OutboundPolicy,
  outboundVariables,
  parseConfig,
  ReadinessController,
  Registry,
  type HostResolver,
} from '@frequency-gateway/platform';
import { startTransactionNotifier, transactionWebhookVariables, webhookVariables } from '../src/index.js';
import { capturedLogger, loopbackPolicy, openDelivery, testSettings } from './support/deliveryStack.js';

const RULE = 'destinations allowed: public addresses and OUTBOUND_ALLOWED_DESTINATIONS';

let redis: LocalRedis;
let receiver: WebhookReceiver;
let prefixes = 0;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  redis = await startRedisServer();
  receiver = await startWebhookReceiver();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  receiver.received.length = 0;
  receiver.respondWith(200);
});
afterAll(async () => {
  await receiver.stop();
  await redis.stop();
});

/** `rebind.example` passes registration (a name) and resolves to the receiver's loopback address. */
const rebinding: HostResolver = async (hostname) =>
  hostname === 'rebind.example' ? [{ address: '127.0.0.1', family: 4 }] : [];

describe('webhook destinations', () => {
  it('are never sent to when refused: a dead letter at once, naming the rule, logged once each', async () => {
    const { logger, text } = capturedLogger();
    const policy = new OutboundPolicy({ resolve: rebinding });
    const sender = openDelivery(redis.url, `refused-${++prefixes}`, testSettings({ maxAttempts: 5 }), logger, policy);
    cleanups.push(() => sender.close());
    const port = receiver.port;
    await sender.delivery.enqueueMany([
      { id: 'direct', url: `${receiver.url}/direct`, event: 'e', body: {} },
      { id: 'spelt', url: `http://0x7f.1:${port}/spelt`, event: 'e', body: {} },
      { id: 'rebound', url: `http://rebind.example:${port}/rebound`, event: 'e', body: {} },
      { id: 'private', url: `http://hook-user:hook-pass-0xfeed@127.0.0.1:${port}/private`, event: 'e', body: {} },
    ]);
    sender.delivery.start();

    await waitUntil(async () => (await sender.delivery.queue.getJobCounts('failed')).failed === 4);
    for (const id of ['direct', 'spelt', 'private']) {
      const job = await sender.delivery.queue.getJob(id);
      expect(job?.failedReason).toBe(`destination refused: 127.0.0.1 is a loopback address; ${RULE}`);
      expect(job?.attemptsMade).toBe(1);
    }
    expect((await sender.delivery.queue.getJob('rebound'))?.failedReason).toBe(
      `destination refused: rebind.example resolves to 127.0.0.1, a loopback address; ${RULE}`,
    );
    expect(receiver.received).toHaveLength(0);
    expect(await sender.outcomes()).toEqual({ delivered: 0, retry: 0, dead_letter: 4 });
    const refusals = text()
      .split('\n')
      .filter((line) => line.includes('webhook destination refused'));
    expect(refusals).toHaveLength(4);
    expect(refusals.join('\n')).toContain(RULE);
    expect(text()).not.toContain('hook-pass-0xfeed');
    expect(text()).not.toContain('webhook attempt failed');
  });

  it('follow no redirect: a 3xx is a failed attempt, and its Location gets nothing', async () => {
    const sender = openDelivery(redis.url, `redirect-${++prefixes}`, testSettings({ maxAttempts: 2 }));
    cleanups.push(() => sender.close());
    receiver.respondWith((webhook) =>
      webhook.path === '/moved' ? { status: 307, headers: { location: `${receiver.url}/target` } } : 200,
    );
    await sender.delivery.enqueue({ id: 'moved', url: `${receiver.url}/moved`, event: 'e', body: {} });
    sender.delivery.start();

    await waitUntil(async () => (await sender.delivery.queue.getJob('moved'))?.finishedOn !== undefined);
    expect((await sender.delivery.queue.getJob('moved'))?.failedReason).toBe('receiver answered 307');
    expect(receiver.received.map((webhook) => webhook.path)).toEqual(['/moved', '/moved']);
  });

  it('of transaction notifications: refused WEBHOOK_BASE_URL said once at start and in health, nothing secret, nothing sent', async () => {
    const { logger, text } = capturedLogger();
    const baseUrl = `http://app-user:app-pass-0xbeef@127.0.0.1:${receiver.port}`;
    const config = parseConfig(
      { ...webhookVariables(), ...transactionWebhookVariables(), ...outboundVariables() },
      { WEBHOOK_BASE_URL: baseUrl, WEBHOOK_MAX_ATTEMPTS: '5', WEBHOOK_RETRY_BASE_MS: '100' },
    );
    const metrics = new Registry();
    const queues = new JobQueues({ redis: redis.url, keyPrefix: `notify-${++prefixes}`, logger, metrics });
    cleanups.push(() => queues.close(1_000));
    const readiness = new ReadinessController({ logger, metrics });
    const notifier = startTransactionNotifier({ config, queues, logger, metrics, readiness });
    await notifier.notify([{ transactionType: 'SIWF_SIGNUP', referenceId: 'ref-1', status: 'SUCCESS' }]);

    const webhooks = queues.queue('webhookQueue');
    await waitUntil(async () => (await webhooks.getJobCounts('failed')).failed === 1);
    expect(receiver.received).toHaveLength(0);
    expect(text()).toContain('WEBHOOK_BASE_URL is refused by the outbound policy');
    expect(text()).toContain(`127.0.0.1 is a loopback address; ${RULE}`);

    const check = await readiness.checkNow('webhook-destination');
    expect(check).toMatchObject({
      status: 'down',
      required: false,
      target: `127.0.0.1:${receiver.port}`,
      error: `127.0.0.1 is a loopback address; ${RULE}`,
    });
    expect(readiness.isReady()).toBe(true);
    expect(JSON.stringify(readiness.snapshot())).not.toContain('app-pass-0xbeef');
    expect(text()).not.toContain('app-pass-0xbeef');
  });

  it('of transaction notifications opened by OUTBOUND_ALLOWED_DESTINATIONS are delivered, and healthy', async () => {
    const { logger, text } = capturedLogger();
    const config = parseConfig(
      { ...webhookVariables(), ...transactionWebhookVariables(), ...outboundVariables() },
      { WEBHOOK_BASE_URL: receiver.url, OUTBOUND_ALLOWED_DESTINATIONS: '127.0.0.0/8' },
    );
    const metrics = new Registry();
    const queues = new JobQueues({ redis: redis.url, keyPrefix: `notify-${++prefixes}`, logger, metrics });
    cleanups.push(() => queues.close(1_000));
    const readiness = new ReadinessController({ logger, metrics });
    const notifier = startTransactionNotifier({ config, queues, logger, metrics, readiness });
    await notifier.notify([{ transactionType: 'SIWF_SIGNUP', referenceId: 'ref-2', status: 'SUCCESS' }]);

    const [webhook] = await receiver.waitFor(1);
    expect(webhook?.path).toBe('/webhooks/transaction-notify');
    expect((await readiness.checkNow('webhook-destination')).status).toBe('up');
    expect(text()).not.toContain('refused');
  });
});

it('the test stacks open the loopback interface and nothing else', () => {
  expect(loopbackPolicy().refusal('http://127.0.0.1:1/')).toBeUndefined();
  expect(loopbackPolicy().refusal('http://10.0.0.1/')).toContain('a private address');
});
