import { randomBytes } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import {
  type LocalRedis,
  startRedisServer,
  startWebhookReceiver,
  waitUntil,
  type WebhookReceiver,
} from '@frequency-gateway/devstack';
import { parseConfig, type Logger } from '@frequency-gateway/platform';
import {
  InvalidDeliveryError,
  verifyWebhook,
  webhookSettings,
  webhookVariables,
  type WebhookSettings,
} from '../src/index.js';
import {
  capturedLogger,
  deliveriesSettled,
  openDelivery,
  testSettings,
  type DeliveryProcess,
} from './support/deliveryStack.js';

let redis: LocalRedis;
let prefixes = 0;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  redis = await startRedisServer();
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(async () => {
  await redis.stop();
});

/** A receiver and a delivery process on a fresh key prefix, closed after the test. */
async function setup(
  settings: WebhookSettings,
  logger?: Logger,
): Promise<{ receiver: WebhookReceiver; sender: DeliveryProcess }> {
  const receiver = await startWebhookReceiver();
  cleanups.push(() => receiver.stop());
  const sender = openDelivery(redis.url, `webhooks-${++prefixes}`, settings, logger);
  cleanups.push(() => sender.close());
  return { receiver, sender };
}

describe('webhook delivery', () => {
  it('POSTs the body as JSON with Standard Webhooks headers that verify with the secret', async () => {
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const { receiver, sender } = await setup(testSettings({ secret, headers: { 'x-gateway': 'frequency' } }));
    const body = { referenceId: 'r-1', blockNumber: 12_345_678_901_234_567_890n, fees: [{ amount: 5n }] };
    await sender.delivery.enqueue({ id: 'tx-1', url: `${receiver.url}/hooks/tx`, event: 'tx.finalized', body });
    sender.delivery.start();
    sender.delivery.start();

    const [webhook] = await receiver.waitFor(1);
    expect(webhook?.path).toBe('/hooks/tx');
    expect(webhook?.body).toEqual({ referenceId: 'r-1', blockNumber: '12345678901234567890', fees: [{ amount: '5' }] });
    expect(webhook?.headers).toMatchObject({
      'content-type': 'application/json',
      'x-gateway': 'frequency',
      'webhook-id': 'tx-1',
      'webhook-signature': expect.stringMatching(/^v1,[A-Za-z0-9+/]{43}=$/),
    });
    const sentAt = Number(webhook?.headers['webhook-timestamp']);
    expect(Math.abs(sentAt - Date.now() / 1000)).toBeLessThan(5);

    const headers = webhook?.headers ?? {};
    const raw = webhook?.raw ?? '';
    expect(verifyWebhook(secret, headers, raw)).toBe(true);
    expect(verifyWebhook(`whsec_${randomBytes(32).toString('base64')}`, headers, raw)).toBe(false);
    expect(verifyWebhook(secret, headers, raw.replace('r-1', 'r-2'))).toBe(false);
    expect(verifyWebhook(secret, { ...headers, 'webhook-timestamp': String(sentAt - 600) }, raw)).toBe(false);

    await waitUntil(async () => (await sender.delivery.queue.getJob('tx-1'))?.finishedOn !== undefined);
    const job = await sender.delivery.queue.getJob('tx-1');
    expect(job?.returnvalue).toEqual({ status: 200, attempt: 1 });
    expect(job?.name).toBe('tx.finalized');
    expect(await sender.outcomes()).toEqual({ delivered: 1, retry: 0, dead_letter: 0 });
  });

  it('delivers the same id once, however often and however it is enqueued', async () => {
    const { receiver, sender } = await setup(testSettings());
    const url = `${receiver.url}/hooks`;
    const delivery = (id: string) => ({ id, url, event: 'announcement', body: { id } });
    await sender.delivery.enqueue(delivery('a'));
    await sender.delivery.enqueue(delivery('a'));
    await sender.delivery.enqueueMany([delivery('a'), delivery('tx:0x01:2'), delivery('42'), delivery('42')]);
    sender.delivery.start();
    await receiver.waitFor(3);
    await sender.delivery.enqueue(delivery('a'));
    await sender.delivery.enqueueMany([delivery('42'), delivery('tx:0x01:2')]);
    await waitUntil(() => deliveriesSettled(sender.delivery.queue), 10_000, 'no delivery left to attempt');

    const ids = receiver.received.map((webhook) => webhook.headers['webhook-id']);
    expect(ids.sort()).toEqual(['42', 'a', 'tx:0x01:2']);
    expect(receiver.received.every((webhook) => webhook.headers['webhook-signature'] === undefined)).toBe(true);
    expect(receiver.received.every((webhook) => /^\d+$/.test(webhook.headers['webhook-timestamp'] ?? ''))).toBe(true);
    expect(await sender.delivery.queue.getJobCounts('completed')).toEqual({ completed: 3 });
  });

  it('retries a failing receiver with doubling delays until it accepts, then stops', async () => {
    const { receiver, sender } = await setup(testSettings({ maxAttempts: 6 }));
    receiver.respondWith(() => (receiver.received.length <= 3 ? 500 : 200));
    await sender.delivery.enqueue({ id: 'flaky', url: receiver.url, event: 'e', body: {} });
    sender.delivery.start();

    const received = await receiver.waitFor(4);
    // Accepted: the job is done, and no further attempt can come.
    await waitUntil(async () => (await sender.delivery.queue.getJob('flaky'))?.finishedOn !== undefined);
    expect(receiver.received).toHaveLength(4);
    expect(new Set(received.map((webhook) => webhook.headers['webhook-id']))).toEqual(new Set(['flaky']));
    const gaps = received.slice(1).map((webhook, i) => webhook.at - (received[i]?.at ?? 0));
    // retryBaseMs 100: nominal delays 100, 200, 400 ms with ±10 % jitter, plus the time of each attempt. Each gap
    // is at least its doubled nominal delay; comparing gaps with each other would measure the machine's load
    // (a busy CI box delays a promotion by a few hundred ms), not the backoff.
    gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(0.9 * 100 * 2 ** i - 2));
    expect(gaps.reduce((sum, gap) => sum + gap, 0)).toBeGreaterThanOrEqual(0.9 * 700 - 6);
    expect(await sender.outcomes()).toEqual({ delivered: 1, retry: 3, dead_letter: 0 });
    expect((await sender.delivery.queue.getJob('flaky'))?.returnvalue).toEqual({ status: 200, attempt: 4 });
  });

  it('waits as long as a 429 Retry-After asks, within retryMaxMs', async () => {
    const { receiver, sender } = await setup(testSettings({ retryMaxMs: 5_000 }));
    receiver.respondWith(() =>
      receiver.received.length === 1 ? { status: 429, headers: { 'retry-after': '1' } } : 200,
    );
    await sender.delivery.enqueue({ id: 'slow-down', url: receiver.url, event: 'e', body: {} });
    sender.delivery.start();

    const [first, second] = await receiver.waitFor(2);
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(1_000);
    await waitUntil(async () => (await sender.outcomes()).delivered === 1);
    expect(await sender.outcomes()).toEqual({ delivered: 1, retry: 1, dead_letter: 0 });
  });

  it('gives up on a receiver that does not answer within the timeout', async () => {
    const sockets = new Set<Socket>();
    let requests = 0;
    const silent: Server = createServer((socket) => {
      sockets.add(socket);
      socket.on('data', (chunk: Buffer) => (requests += chunk.toString().startsWith('POST ') ? 1 : 0));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    cleanups.push(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    });
    const port = (silent.address() as { port: number }).port;
    const { sender } = await setup(testSettings({ maxAttempts: 2, timeoutMs: 200 }));
    await sender.delivery.enqueue({ id: 'unanswered', url: `http://127.0.0.1:${port}/`, event: 'e', body: {} });
    sender.delivery.start();

    await waitUntil(async () => (await sender.delivery.queue.getJob('unanswered'))?.finishedOn !== undefined);
    const job = await sender.delivery.queue.getJob('unanswered');
    expect(await job?.getState()).toBe('failed');
    expect(job?.failedReason).toBe('no answer within 200 ms');
    expect(requests).toBe(2);
  });

  it('leaves a delivery that runs out of attempts in the failed set, from where a retry delivers it', async () => {
    const { receiver, sender } = await setup(testSettings({ maxAttempts: 3 }));
    receiver.respondWith(500);
    await sender.delivery.enqueue({ id: 'doomed', url: receiver.url, event: 'e', body: { n: 1 } });
    sender.delivery.start();

    await waitUntil(async () => (await sender.delivery.queue.getJob('doomed'))?.finishedOn !== undefined);
    // The outcome is counted when the worker hears of the failure, a moment after the job is marked finished.
    await waitUntil(async () => (await sender.outcomes()).dead_letter === 1);
    const job = await sender.delivery.queue.getJob('doomed');
    expect(await job?.getState()).toBe('failed');
    expect(job?.attemptsMade).toBe(3);
    expect(job?.failedReason).toBe('receiver answered 500');
    expect(receiver.received).toHaveLength(3);
    expect(await sender.outcomes()).toEqual({ delivered: 0, retry: 2, dead_letter: 1 });
    const gauge = await sender.metrics.getSingleMetricAsString('queue_jobs');
    expect(gauge).toContain('queue_jobs{queue="webhookQueue",state="failed"} 1');

    // What the Retry button of the /queues board does.
    receiver.respondWith(200);
    await job?.retry('failed');
    await receiver.waitFor(4);
    await waitUntil(async () => (await sender.delivery.queue.getJob('doomed'))?.returnvalue !== null);
    expect(await (await sender.delivery.queue.getJob('doomed'))?.getState()).toBe('completed');
    expect(await sender.outcomes()).toEqual({ delivered: 1, retry: 2, dead_letter: 1 });
  });

  it('refuses an invalid delivery and then stores nothing of its batch', async () => {
    const { receiver, sender } = await setup(testSettings());
    const good = { id: 'fine', url: receiver.url, event: 'e', body: {} };
    await expect(sender.delivery.enqueue({ ...good, url: 'ftp://example.com/hook' })).rejects.toThrow(
      InvalidDeliveryError,
    );
    await expect(sender.delivery.enqueueMany([good, { ...good, id: '' }])).rejects.toThrow(/id/);
    await expect(sender.delivery.enqueue({ ...good, body: undefined })).rejects.toThrow(/body/);
    expect(await sender.delivery.queue.count()).toBe(0);
  });

  it('sends WEBHOOK_BEARER_TOKEN as a bearer token, unless the URL carries credentials of its own, and never logs it', async () => {
    const token = 'bearer-t0ken-that-must-never-be-logged';
    const { maxAttempts, retryBaseMs, retryMaxMs, timeoutMs, concurrency, headers } = webhookSettings(
      parseConfig(webhookVariables(), { WEBHOOK_BEARER_TOKEN: token }),
    );
    const { logger, text } = capturedLogger();
    const { receiver, sender } = await setup(
      {
        ...testSettings(),
        maxAttempts,
        retryBaseMs,
        retryMaxMs,
        timeoutMs,
        concurrency,
        ...(headers ? { headers } : {}),
      },
      logger,
    );
    const basic = `http://hook-user:hook-pass@127.0.0.1:${receiver.port}/basic`;
    await sender.delivery.enqueueMany([
      { id: 'bearer-1', url: `${receiver.url}/bearer`, event: 'e', body: {} },
      { id: 'basic-1', url: basic, event: 'e', body: {} },
    ]);
    sender.delivery.start();
    const received = await receiver.waitFor(2);
    const byPath = Object.fromEntries(received.map((webhook) => [webhook.path, webhook.headers.authorization]));
    expect(byPath).toEqual({
      '/bearer': `Bearer ${token}`,
      '/basic': `Basic ${Buffer.from('hook-user:hook-pass').toString('base64')}`,
    });
    await waitUntil(async () => text().split('webhook delivered').length === 3);
    expect(text()).not.toContain(token);
  });

  it('keeps the secret and the URL credentials out of the logs', async () => {
    const secret = 'signing-secret-that-must-never-be-logged';
    const { logger, text } = capturedLogger();
    const { receiver, sender } = await setup(testSettings({ secret }), logger);
    receiver.respondWith(() => (receiver.received.length === 1 ? 500 : 204));
    const host = `127.0.0.1:${receiver.port}`;
    const url = `http://hook-user:hook-pass-0xfeed@${host}/private?token=query-token-0xbeef`;
    await sender.delivery.enqueue({ id: 'private-1', url, event: 'e', body: { secret: 'not-a-real-one' } });
    sender.delivery.start();

    const [, delivered] = await receiver.waitFor(2);
    expect(delivered?.path).toBe('/private?token=query-token-0xbeef');
    expect(delivered?.headers.authorization).toBe(
      `Basic ${Buffer.from('hook-user:hook-pass-0xfeed').toString('base64')}`,
    );
    expect(verifyWebhook(secret, delivered?.headers ?? {}, delivered?.raw ?? '')).toBe(true);
    await waitUntil(async () => text().includes('webhook delivered'));

    const logs = text();
    expect(logs).toContain('"deliveryId":"private-1"');
    expect(logs).toContain(`"host":"${host}"`);
    expect(logs).toMatch(/"status":500.*"attempt":1|"attempt":1.*"status":500/);
    expect(logs).toMatch(/"status":204/);
    for (const leak of [secret, 'hook-pass-0xfeed', 'query-token-0xbeef', delivered?.headers['webhook-signature']]) {
      expect(logs).not.toContain(leak);
    }
  });
});
