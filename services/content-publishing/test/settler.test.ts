import { PassThrough } from 'node:stream';
import { chainError, type TransactionOutcome } from '@frequency-gateway/chain';
import { startRedisServer, type LocalRedis } from '@frequency-gateway/devstack';
import { createLogger, JobQueues, OutboundPolicy, Registry } from '@frequency-gateway/platform';
import { TransactionNotifier, WebhookDelivery } from '@frequency-gateway/webhooks';
import type { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { contentRequests } from '../src/requests.js';
import { publishingMetrics } from '../src/worker/metrics.js';
import { OutcomeNotifier } from '../src/worker/notify/notifier.js';
import { PUBLISH_JOB_NAMES, type PublishJobs } from '../src/jobs/publish.js';
import { messageId, PublicationBook, type Publication } from '../src/worker/publish/publications.js';
import { RequestRecords } from '../src/worker/requestRecords.js';
import { PublicationSettler } from '../src/worker/track/settler.js';

// The tracker (tested in shared/chain against the devchain) reads outcomes from blocks; here the outcomes a
// chain can produce but a devchain run rarely does (a full block, an expiry, a packed transaction failing for
// one of its messages) are fed to the track stage directly, on a real Redis.
describe('the track stage: publication outcomes settled', () => {
  let server: LocalRedis;
  let redis: Redis;
  let queues: JobQueues;
  let publishQueue: Queue<PublishJobs['retry']>;
  let webhookQueue: Queue;
  let book: PublicationBook;
  let settler: PublicationSettler;
  const status = () => contentRequests.store(redis, 'outcomes', 3600);

  beforeAll(async () => {
    server = await startRedisServer();
    redis = new Redis(server.url);
    const logger = createLogger({
      component: 'outcomes-test',
      level: 'warn',
      pretty: false,
      destination: new PassThrough().resume(),
    });
    const metrics = new Registry();
    queues = new JobQueues({ redis: server.url, keyPrefix: 'outcomes', logger, metrics });
    publishQueue = queues.queue<PublishJobs['retry']>('publishQueue');
    const settings = { maxAttempts: 3, retryBaseMs: 100, retryMaxMs: 1000, timeoutMs: 1000, concurrency: 1 };
    // Deliveries are only queued here, never sent: an empty allowlist would refuse any destination anyway.
    const outbound = new OutboundPolicy({ mode: 'allowlist' });
    const delivery = new WebhookDelivery({ queues, settings, logger, metrics, outbound });
    webhookQueue = delivery.queue as unknown as Queue;
    book = new PublicationBook(redis, 'outcomes');
    const records = new RequestRecords(status(), {
      listener: new OutcomeNotifier(new TransactionNotifier(delivery, 'http://app.example'), '1'),
      finished: publishingMetrics(metrics).finished,
    });
    settler = new PublicationSettler({
      book,
      records,
      publisher: publishQueue,
      maxAttempts: 2,
      retryDelayMs: 6000,
      logger,
    });
  });
  afterAll(async () => {
    await queues?.close();
    redis?.disconnect();
    await server?.stop();
  });

  /** A publication of `messages` IPFS messages for the given requests, every message submitted in `txHash`. */
  async function submitted(id: string, referenceIds: string[], txHashes: string[]): Promise<Publication> {
    const publication: Publication = {
      id,
      transactionType: 'CAPACITY_BATCH',
      referenceIds,
      messages: txHashes.map((_, index) => ({ kind: 'ipfs', schemaId: 16, cid: `bafy${index}`, size: 10 })),
      batchId: id,
    };
    await book.open(publication);
    await book.set(id, new Map(txHashes.map((txHash, index) => [index, { state: 'submitted', txHash }])));
    for (const referenceId of referenceIds)
      await status().create(referenceId, { state: 'submitted', kind: 'broadcast' });
    return publication;
  }
  const block = { blockNumber: 12, blockHash: '0xb10c', events: [] };
  const stateOf = async (referenceId: string) => (await status().get(referenceId))?.state;

  it('finalizes the requests only when every message of the publication is in a finalized block', async () => {
    await submitted('two-tx', ['r1'], ['0xaa', '0xbb']);
    await settler.settle({ txHash: '0xaa', jobs: [messageId('two-tx', 0)], status: 'succeeded', ...block });
    expect(await stateOf('r1')).toBe('submitted');
    await settler.settle({
      txHash: '0xbb',
      jobs: [messageId('two-tx', 1)],
      status: 'succeeded',
      ...block,
      blockNumber: 13,
    });
    const record = await status().get('r1');
    expect(record).toMatchObject({
      state: 'finalized',
      block: { number: 13, hash: '0xb10c' },
      transaction: { hash: '0xbb' },
    });
    const webhook = await webhookQueue.getJob('r1.SUCCESS');
    expect(webhook?.data).toMatchObject({ payload: expect.stringContaining('"status":"SUCCESS"') });
  });

  it('ignores the outcome of a transaction the message no longer rides in', async () => {
    await submitted('stale', ['r2'], ['0xnew']);
    await settler.settle({ txHash: '0xold', jobs: [messageId('stale', 0)], status: 'expired', blockNumber: 20 });
    expect((await book.get('stale'))!.messages[0]).toEqual({ state: 'submitted', txHash: '0xnew' });
    expect(await stateOf('r2')).toBe('submitted');
  });

  it('sends messages again after a full block, then fails them as expired once the attempts are spent', async () => {
    await submitted('full', ['r3'], ['0x01']);
    const full: TransactionOutcome = {
      txHash: '0x01',
      jobs: [messageId('full', 0)],
      status: 'failed',
      error: chainError({ module: 'Messages', name: 'TooManyMessagesInBlock', index: 61, code: 0 }),
      ...block,
    };
    await settler.settle(full);
    let record = (await book.get('full'))!;
    expect(record.messages[0]).toEqual({ state: 'pending', after: '0x01' });
    expect(record.attempts).toBe(1);
    const retry = (await publishQueue.getJobs(['delayed'])).find((job) => job.data.publicationId === 'full');
    expect(retry?.name).toBe(PUBLISH_JOB_NAMES.retry);

    for (const [attempt, txHash] of (['0x02', '0x03'] as const).entries()) {
      await book.set('full', new Map([[0, { state: 'submitted', txHash }]]));
      await settler.settle({ txHash, jobs: [messageId('full', 0)], status: 'expired', blockNumber: 30 + attempt });
    }
    record = (await book.get('full'))!;
    expect(record.messages[0]).toMatchObject({ state: 'failed', error: { expired: true } });
    expect(await status().get('r3')).toMatchObject({ state: 'failed', error: { expired: true } });
    expect(await webhookQueue.getJob('r3.EXPIRED')).toBeDefined();
  });

  it('takes a failed packed transaction apart: each message goes alone, and only the refused one fails', async () => {
    await submitted('good', ['r4'], ['0xpk']);
    await submitted('bad', ['r5'], ['0xpk']);
    const packed: TransactionOutcome = {
      txHash: '0xpk',
      jobs: [messageId('bad', 0), messageId('good', 0)],
      status: 'failed',
      error: chainError({ module: 'Messages', name: 'InvalidSchemaId', index: 61, code: 4 }),
      ...block,
    };
    await settler.settle(packed);
    for (const id of ['good', 'bad']) {
      const record = (await book.get(id))!;
      expect(record.messages[0]).toEqual({ state: 'pending', after: '0xpk' });
      expect(record.solo).toEqual(new Set([0]));
      expect(record.attempts).toBe(0);
    }
    await book.set('bad', new Map([[0, { state: 'submitted', txHash: '0xsolo' }]]));
    await settler.settle({ ...packed, txHash: '0xsolo', jobs: [messageId('bad', 0)] });
    expect(await status().get('r5')).toMatchObject({
      state: 'failed',
      error: { module: 'Messages', name: 'InvalidSchemaId', index: 61, code: 4 },
    });
    expect(await stateOf('r4')).toBe('submitted');
    const webhook = await webhookQueue.getJob('r5.FAILED');
    expect(JSON.parse(webhook!.data.payload as string)).toMatchObject({
      transactionType: 'CAPACITY_BATCH',
      providerId: '1',
      referenceId: 'r5',
      status: 'FAILED',
      txHash: '0xsolo',
      error: { module: 'Messages', name: 'InvalidSchemaId', index: 61, code: 4 },
    });
  });

  // The tracker scans a block again when a crash or a Redis failover lost what followed the messages' new states
  // (their publication's record is written first): the requests' end, its webhooks, a retry job.
  it("settles an outcome again when only the messages' new states were kept: the end and its webhook are redone", async () => {
    await submitted('kept', ['r6', 'r7'], ['0xcc']);
    const outcome: TransactionOutcome = { txHash: '0xcc', jobs: [messageId('kept', 0)], status: 'succeeded', ...block };
    // What the first settling wrote before it stopped.
    await book.set(
      'kept',
      new Map([[0, { state: 'finalized', txHash: '0xcc', blockNumber: 12, blockHash: '0xb10c' }]]),
    );
    await settler.settle(outcome);
    for (const referenceId of ['r6', 'r7']) {
      expect(await status().get(referenceId)).toMatchObject({ state: 'finalized', transaction: { hash: '0xcc' } });
      expect(await webhookQueue.getJob(`${referenceId}.SUCCESS`)).toBeDefined();
    }
    // Once more, with everything in place: nothing is queued twice.
    const before = await webhookQueue.count();
    await settler.settle(outcome);
    expect(await webhookQueue.count()).toBe(before);
  });

  it("queues the retry again when only the messages' new states were kept, counting the attempt once", async () => {
    await submitted('again', ['r8'], ['0xdd']);
    const full: TransactionOutcome = {
      txHash: '0xdd',
      jobs: [messageId('again', 0)],
      status: 'failed',
      error: chainError({ module: 'Messages', name: 'TooManyMessagesInBlock', index: 61, code: 0 }),
      ...block,
    };
    await book.set('again', new Map([[0, { state: 'pending', after: '0xdd' }]]), { attempts: 1 });
    await settler.settle(full);
    const retries = async () =>
      (await publishQueue.getJobs(['delayed', 'waiting'])).filter((job) => job.data.publicationId === 'again');
    expect(await retries()).toHaveLength(1);
    expect((await book.get('again'))!.attempts).toBe(1);
    await settler.settle(full);
    expect(await retries()).toHaveLength(1);
    expect(await stateOf('r8')).toBe('submitted');
  });
});
