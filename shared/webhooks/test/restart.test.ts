import { type LocalRedis, startRedisServer, startWebhookReceiver, waitUntil } from '@frequency-gateway/devstack';
import { deliveriesSettled, openDelivery, testSettings } from './support/deliveryStack.js';

let redis: LocalRedis;

beforeAll(async () => {
  redis = await startRedisServer();
});

afterAll(async () => {
  await redis.stop();
});

describe('webhook delivery across a restart', () => {
  it('delivers everything once after the receiver was down and the delivering process was replaced', async () => {
    const receiver = await startWebhookReceiver();
    await receiver.stop();
    const settings = testSettings({ maxAttempts: 50, retryBaseMs: 100, retryMaxMs: 400 });
    const ids = ['r-1', 'r-2', 'r-3', 'r-4', 'r-5'];
    const deliveries = ids.map((id) => ({ id, url: `${receiver.url}/hooks`, event: 'e', body: { id } }));

    const before = openDelivery(redis.url, 'restart', settings);
    await before.delivery.enqueueMany(deliveries);
    before.delivery.start();
    await waitUntil(async () => (await before.outcomes()).retry >= 2 * ids.length);
    await before.close();

    const after = openDelivery(redis.url, 'restart', settings);
    try {
      const counts = await after.delivery.queue.getJobCounts('delayed', 'waiting', 'completed', 'failed');
      expect(counts).toEqual({ delayed: expect.any(Number), waiting: expect.any(Number), completed: 0, failed: 0 });
      expect((counts.delayed ?? 0) + (counts.waiting ?? 0)).toBe(ids.length);
      expect(receiver.received).toHaveLength(0);

      await receiver.start();
      after.delivery.start();
      await receiver.waitFor(ids.length);
      await waitUntil(async () => (await after.delivery.queue.getJobCounts('completed')).completed === ids.length);
      await waitUntil(() => deliveriesSettled(after.delivery.queue), 10_000, 'no delivery left to attempt');

      const received = receiver.received.map((webhook) => webhook.headers['webhook-id']);
      expect(received.sort()).toEqual(ids);
      expect(receiver.received.map((webhook) => webhook.body)).toEqual(
        expect.arrayContaining(ids.map((id) => ({ id }))),
      );
      expect((await after.outcomes()).delivered).toBe(ids.length);
    } finally {
      await after.close();
      await receiver.stop();
    }
  });
});
