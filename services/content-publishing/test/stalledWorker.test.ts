import {
  startWebhookReceiver,
  stallWorker,
  stallFigures,
  notificationsByReference,
  type Stall,
  type WebhookReceiver,
} from '@frequency-gateway/devstack';
import { redisKeyspace } from '@frequency-gateway/platform';
import * as bullmq from 'bullmq';
import { CONTENT_PUBLISHING_QUEUES } from '../src/queues.js';
import { bestBlock, postBroadcasts, rowsOnChain } from './support/broadcasts.js';
import { startPipeline, waitUntil, type PipelineStack } from './support/pipeline.js';

const BROADCASTS = 2000;
const QUEUE_PREFIX = `${redisKeyspace('pipeline')}:bull`;
const MSA_ID = 2;
/** The shortest lock the timing contract allows (twice the 10 s record deadline), looked for stalls every 5 s. */
const LOCK = { SIGNING_JOB_LOCK_MS: '20000', SIGNING_JOB_STALLED_CHECK_MS: '5000' };
/**
 * Webhooks a worker sends at once: those the frozen one had posted but not recorded as answered are sent again by
 * the other, under the same webhook-id (signed: WEBHOOK_SECRET).
 */
const WEBHOOKS_AT_ONCE = 20;

describe('publishing with a worker frozen past its job lock', () => {
  const logs: string[] = [];
  let stack: PipelineStack;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    stack = await startPipeline({
      // One worker until it is frozen; the second starts then and takes its publications over.
      workers: 1,
      // Batches of 50: many publications.
      workerEnv: {
        ...LOCK,
        WEBHOOK_BASE_URL: receiver.url,
        WEBHOOK_SECRET: 'stalled-worker-test-secret',
        WEBHOOK_CONCURRENCY: String(WEBHOOKS_AT_ONCE),
        BATCH_MAX_COUNT: '50',
        BATCH_INTERVAL_SECONDS: '2',
      },
      workerLogs: logs,
    });
  }, 240_000);
  afterAll(async () => {
    await stack?.stop();
    await receiver?.stop();
  });

  it(`two workers, one frozen while ${BROADCASTS} broadcasts arrive: each published once, one webhook each`, async () => {
    const started = Date.now();
    const from = await bestBlock(stack);
    // The first worker is frozen while it holds publications; the broadcasts go on arriving meanwhile.
    let stall: Stall | undefined;
    const stalling = stallWorker(
      stack.workers[0]!,
      { bullmq, name: CONTENT_PUBLISHING_QUEUES.publish, redisUrl: stack.redis.url, prefix: QUEUE_PREFIX },
      150_000,
      { takeOver: () => stack.startWorker() },
    ).then((done) => (stall = done));
    // Awaited once the broadcasts are in; a failure meanwhile is not left unhandled.
    stalling.catch(() => undefined);
    const ids = await postBroadcasts(stack, { msaId: MSA_ID, count: BROADCASTS, label: 'stall' });
    await stalling;

    const records = await stack.settled(ids, 150_000);
    expect(records.filter((record) => record.state !== 'finalized')).toEqual([]);
    await waitUntil(async () => receiver.received.length >= BROADCASTS, 60_000, 'a webhook for every broadcast');
    // Nothing left that could publish or notify again: every queue empty, no transaction followed.
    await waitUntil(
      async () => {
        for (const name of Object.values(CONTENT_PUBLISHING_QUEUES)) {
          const other = new bullmq.Queue(name, { connection: { url: stack.redis.url }, prefix: QUEUE_PREFIX });
          const counts = await other.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
          await other.close();
          if (Object.values(counts).some((count) => count > 0)) return false;
        }
        return true;
      },
      60_000,
      'the queues settled',
    );

    // One notification per request; a delivery the frozen worker had in flight may come again under its id.
    const byReference = notificationsByReference(receiver.received);
    expect([...byReference].filter(([, bodies]) => bodies.length > 1)).toEqual([]);
    expect(ids.filter((id) => byReference.get(id)?.[0]?.status !== 'SUCCESS')).toEqual([]);
    expect(receiver.received.length - byReference.repeated).toBe(BROADCASTS);
    expect(byReference.repeated).toBeLessThanOrEqual(WEBHOOKS_AT_ONCE);

    // One row per broadcast on chain, no batch file announced twice, and each request's batch among them.
    const { rows, cids } = await rowsOnChain(stack, MSA_ID, from);
    expect(rows).toHaveLength(BROADCASTS);
    expect(new Set(rows.map((row) => row.contentHash)).size).toBe(BROADCASTS);
    expect(new Set(cids).size).toBe(cids.length);
    const announced = new Set(cids);
    expect(records.filter((record) => !announced.has(record.batch?.cid ?? ''))).toEqual([]);

    process.stdout.write(
      `stalled worker figures (broadcasts): ${JSON.stringify({
        seconds: (Date.now() - started) / 1000,
        broadcasts: ids.length,
        finalized: records.filter((record) => record.state === 'finalized').length,
        webhooks: receiver.received.length,
        webhooksSentAgain: byReference.repeated,
        rows: rows.length,
        batches: cids.length,
        ...stallFigures(stall, logs),
      })}\n`,
    );
  }, 300_000);
});
