import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { startDevchain, type Devchain } from '@frequency-gateway/devchain';
import { startRedisServer, waitUntil, type LocalRedis } from '@frequency-gateway/devstack';
import { redisKeyspace, startComponent, type StartedComponent } from '@frequency-gateway/platform';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { CONTENT_PUBLISHING_QUEUES } from '../src/queues.js';
import { contentPublishingWorker } from '../src/worker/component.js';

const PREFIX = 'start';
/** A schema's pointer to its open batch, as the batch stage keeps it (see worker/batch/book.ts). */
const OPEN_BATCH_POINTER = `${redisKeyspace(PREFIX)}:batch:open:99`;

// The pipeline's start is retried (startWhenChainReady) after any failure, the chain going away during it
// included. A failure after the queue workers and metrics exist is the one that tests the undoing: here an open
// batch pointer of the wrong type makes the re-arming of open batches, the step before following the chain,
// fail with WRONGTYPE for as long as the key is there.
describe('the worker whose pipeline start fails after its queue workers started', () => {
  let redisServer: LocalRedis;
  let redis: Redis;
  let devchain: Devchain;
  let worker: StartedComponent<unknown>;
  let storeDir: string;
  const queues: Queue[] = [];

  beforeAll(async () => {
    [redisServer, devchain] = await Promise.all([startRedisServer(), startDevchain()]);
    redis = new Redis(redisServer.url);
    storeDir = mkdtempSync(join(tmpdir(), 'worker-start-'));
    await redis.hset(OPEN_BATCH_POINTER, 'not', 'a batch id');
    worker = (await startComponent(contentPublishingWorker, {
      env: {
        REDIS_URL: redisServer.url,
        FREQUENCY_API_WS_URL: devchain.url,
        PROVIDER_ID: '1',
        PROVIDER_ACCOUNT_SEED_PHRASE: '//Alice',
        IPFS_EMBEDDED_DIR: storeDir,
        CACHE_KEY_PREFIX: PREFIX,
        READINESS_INTERVAL_MS: '100',
      },
      port: 0,
      logDestination: new PassThrough().resume(),
    })) as StartedComponent<unknown>;
  }, 60_000);

  afterAll(async () => {
    await worker?.stop();
    await Promise.all(queues.map((queue) => queue.close()));
    redis?.disconnect();
    await devchain?.close();
    await redisServer?.stop();
    if (storeDir) rmSync(storeDir, { recursive: true, force: true });
  });

  const queue = (name: string) => {
    const client = new Queue(name, { connection: { url: redisServer.url }, prefix: `${redisKeyspace(PREFIX)}:bull` });
    queues.push(client);
    return client;
  };
  /** Workers consuming each stage's queue, over every process and attempt (BullMQ names their connections). */
  const consumers = async () => {
    const { request, batch, publish } = CONTENT_PUBLISHING_QUEUES;
    return Object.fromEntries(
      await Promise.all([request, batch, publish].map(async (name) => [name, await queue(name).getWorkersCount()])),
    ) as Record<string, number>;
  };
  const publisherCheck = async () => {
    const body = (await (await fetch(`${worker.url}/readyz`)).json()) as {
      checks: Record<string, { status: string; error?: string }>;
    };
    return body.checks.publisher ?? { status: 'pending' };
  };
  const failedAttempts = (error = '') => Number(/\((\d+) failed attempts/.exec(error)?.[1] ?? 0);

  it('undoes each failed attempt (no queue worker left, metrics registered once) and starts once the cause is gone', async () => {
    // Every attempt fails where the first did: a second registration of the metrics would fail earlier.
    await waitUntil(async () => failedAttempts((await publisherCheck()).error) >= 3, 60_000, 'three failed attempts');
    expect((await publisherCheck()).error).toMatch(/3 failed attempts.*WRONGTYPE/);
    // The attempts' queue workers were closed with them.
    expect(await consumers()).toEqual({ requestQueue: 0, batchQueue: 0, publishQueue: 0 });

    await redis.del(OPEN_BATCH_POINTER);
    await waitUntil(async () => (await publisherCheck()).status === 'up', 30_000, 'the publisher pipeline started');
    expect(await consumers()).toEqual({ requestQueue: 1, batchQueue: 1, publishQueue: 1 });
    const metrics = await (await fetch(`${worker.url}/metrics`)).text();
    for (const name of ['content_announcements_batched_total', 'content_publish_transactions_total'])
      expect(metrics.split('\n').filter((line) => line === `# TYPE ${name} counter`)).toHaveLength(1);
  }, 120_000);
});
