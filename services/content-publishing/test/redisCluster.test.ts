import { scanKeys } from '@frequency-gateway/platform';
import { SIGNING_KEYSPACE } from '@frequency-gateway/chain';
import { callJson, slotsOfKeyspaces, startWebhookReceiver, type WebhookReceiver } from '@frequency-gateway/devstack';
import { verifyWebhook } from '@frequency-gateway/webhooks';
import { Cluster } from 'ioredis';
import { startPipeline, type PipelineStack } from './support/pipeline.js';

// Content publishing, unchanged, on a 3-primary Redis Cluster (REDIS_CLUSTER_NODES): the intake script, the batch
// scripts and BullMQ's touch several keys at once, which a cluster allows only within one hash slot.
const SECRET = 'cluster-webhook-secret-0123456789';
let stack: PipelineStack;
let receiver: WebhookReceiver;
let admin: Cluster;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  stack = await startPipeline({
    redis: 'cluster',
    workerEnv: { WEBHOOK_BASE_URL: receiver.url, WEBHOOK_SECRET: SECRET, BATCH_MAX_COUNT: '100' },
  });
  admin = new Cluster(stack.cluster!.nodes.map((node) => ({ host: '127.0.0.1', port: node.port })));
}, 180_000);
afterAll(async () => {
  admin?.disconnect();
  await stack?.stop();
  await receiver?.stop();
});

test('broadcasts on a Redis Cluster: 202, batched, finalized, one webhook each; every key under {pipeline}', async () => {
  const published = '2026-11-21T10:00:00.000Z';
  const ids: string[] = [];
  for (let index = 0; index < 5; index++) {
    const answer = await callJson(stack.api.url, 'POST', '/v1/content/2/broadcast', {
      content: { content: `on a cluster ${index}`, published },
    });
    expect(answer.status).toBe(202);
    ids.push(answer.body.referenceId as string);
  }
  const records = await stack.settled(ids, 90_000);
  expect(records.map((record) => record.state)).toEqual(ids.map(() => 'finalized'));
  expect(records.every((record) => record.batch?.cid && record.block?.number)).toBe(true);

  const webhooks = await receiver.waitFor(ids.length, 30_000);
  expect(webhooks.map((webhook) => (webhook.body as { referenceId: string }).referenceId).sort()).toEqual(
    [...ids].sort(),
  );
  expect(webhooks.every((webhook) => verifyWebhook(SECRET, webhook.headers, webhook.raw))).toBe(true);

  // Every key the components wrote is in the service's keyspace or the signing key's (shared with the other
  // services), each in one slot, on one primary.
  const keys: string[] = [];
  for await (const key of scanKeys(admin, '*')) keys.push(key);
  const keyspaces = ['{pipeline}:', `${SIGNING_KEYSPACE}:`];
  const spread = await slotsOfKeyspaces(keys, keyspaces, (key) => admin.cluster('KEYSLOT', key));
  expect(spread).toEqual({ strays: [], slots: { '{pipeline}:': 1, [`${SIGNING_KEYSPACE}:`]: 1 } });
  // No request was notified twice.
  expect(receiver.received).toHaveLength(ids.length);
}, 180_000);
