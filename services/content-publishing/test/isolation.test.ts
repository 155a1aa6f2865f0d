import { ChainQueries } from '@frequency-gateway/chain';
import { callJson, jsonAnswerOf, startWebhookReceiver, type WebhookReceiver } from '@frequency-gateway/devstack';
import { AnnouncementType } from '@frequency-gateway/dsnp';
import { dsnpHash } from '@frequency-gateway/storage';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { CloseBatchJob } from '../src/jobs/batch.js';
import { CONTENT_PUBLISHING_QUEUES } from '../src/queues.js';
import { contentRequests } from '../src/requests.js';
import { BatchBook } from '../src/worker/batch/book.js';
import { olderApi, type OlderApi } from './support/olderApi.js';
import { batchRows, messagesOf, startPipeline, type PipelineStack, type RequestRecord } from './support/pipeline.js';
import { form, png } from './support/stack.js';

const PUBLISHED = '2026-11-21T10:00:00.000Z';
const KEYSPACE = '{pipeline}';
const LARGEST = (2n ** 63n - 1n).toString();
const TOO_LARGE = (2n ** 63n).toString();
/** A schema the devchain does not have: a batch under it fails every attempt to write it. */
const NO_SCHEMA = 9999;

interface Notification {
  referenceId: string;
  status: string;
  error?: { message: string };
}

// The whole pipeline as deployed (api, worker, devchain, Redis and Kubo, each its own process): requests that
// cannot be published, mixed into batches of good ones. Today's api refuses what the batch file cannot hold
// (content.test.ts); the worker must still isolate what an earlier api let through, what the document stage
// cannot build, an asset the store lost, and a batch whose job fails for good.
describe('isolation of requests: one that cannot be published fails alone, with its reason', () => {
  let stack: PipelineStack;
  let receiver: WebhookReceiver;
  let older: OlderApi;
  let redis: Redis;
  const workerLogs: string[] = [];

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    stack = await startPipeline({
      // A long interval: the poison rows and the good ones join the same batches. Info lines name each batch written.
      workerEnv: {
        WEBHOOK_BASE_URL: receiver.url,
        BATCH_MAX_COUNT: '100',
        BATCH_INTERVAL_SECONDS: '6',
        LOG_LEVEL: 'info',
      },
      workerLogs,
    });
    older = olderApi(stack.redis.url, KEYSPACE);
    redis = new Redis(stack.redis.url);
  }, 180_000);
  afterAll(async () => {
    older?.close();
    redis?.disconnect();
    await stack?.stop();
    await receiver?.stop();
  });

  /** An uploaded picture that Kubo then lost (unpinned and collected): the api still knows it as uploaded. */
  async function lostPicture(): Promise<string> {
    const upload = await jsonAnswerOf(
      await fetch(`${stack.api.url}/v2/asset/upload`, {
        method: 'POST',
        body: form([{ name: 'lost.png', type: 'image/png', bytes: png(3000, 41) }]),
      }),
    );
    const cid = upload.body.files[0].cid as string;
    for (const command of [`pin/rm?arg=${cid}`, 'repo/gc'])
      expect((await fetch(`${stack.kubo.apiUrl}/api/v0/${command}`, { method: 'POST' })).status).toBe(200);
    return cid;
  }

  /** Requests whose rows joined a batch under a schema the chain does not have, and that batch's close job. */
  async function doomedBatch(count: number): Promise<string[]> {
    const book = new BatchBook(redis, KEYSPACE, { maxRows: 100 });
    const status = contentRequests.store(redis, KEYSPACE, 3600);
    const ids = Array.from({ length: count }, (_, index) => `doomed-${index}-${Date.now()}`);
    let batchId = '';
    for (const referenceId of ids) {
      await status.create(referenceId, { state: 'processing', kind: 'reaction' });
      const joined = await book.join(
        NO_SCHEMA,
        { referenceId, acceptedAt: new Date().toISOString() },
        {
          row: {
            announcementType: AnnouncementType.Reaction,
            fromId: '10',
            emoji: '👍',
            apply: 1,
            inReplyTo: 'dsnp://2/x',
          },
        },
      );
      if (joined.outcome === 'joined') batchId = joined.batchId;
    }
    status.close();
    const batchQueue = new Queue<CloseBatchJob>(CONTENT_PUBLISHING_QUEUES.batch, {
      connection: { url: stack.redis.url },
      prefix: `${KEYSPACE}:bull`,
    });
    // One attempt: its last attempt fails at once (the service's own close jobs are tried for about 17 minutes).
    await batchQueue.add('close', { batchId, schemaId: NO_SCHEMA }, { jobId: `doomed-${batchId}`, attempts: 1 });
    await batchQueue.close();
    return ids;
  }

  /** The worker's log lines with this message. */
  const logged = (message: string) =>
    workerLogs
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as Record<string, unknown>];
        } catch {
          return [];
        }
      })
      .filter((entry) => entry.msg === message);

  it('publishes every good request of batches with poison rows, and fails each poison request alone', async () => {
    const lost = await lostPicture();
    const target = `dsnp://2/${dsnpHash(new TextEncoder().encode('earlier'))}`;
    const note = (content: string, extra: object = {}) => ({ content: { content, published: PUBLISHED, ...extra } });
    const post = async (path: string, body: unknown, method = 'POST') => {
      const answer = await callJson(stack.api.url, method, path, body);
      expect({ path, status: answer.status }).toEqual({ path, status: 202 });
      return (answer.body?.referenceId ?? answer.headers.get('location')?.split('/').pop()) as string;
    };
    const reaction = (extra: object = {}) => ({ emoji: '👍', apply: 1, inReplyTo: target, ...extra });

    // Good and poison requests together, so that they meet in the same batches.
    const [good, poison] = await Promise.all([
      Promise.all([
        post('/v1/content/2/broadcast', note('good broadcast')),
        older.accept('broadcast', LARGEST, note('from the largest id a file holds')),
        post('/v1/content/3/reaction', reaction()),
        older.accept('reaction', LARGEST, reaction({ apply: 2 })),
        post('/v1/content/4/reply', { inReplyTo: target, content: { content: 'good reply', published: PUBLISHED } }),
        post('/v1/profile/5', { profile: { name: 'Five' } }, 'PUT'),
      ]),
      Promise.all([
        older.accept('broadcast', TOO_LARGE, note('from too large an id')),
        older.accept('reaction', (2n ** 64n - 1n).toString(), reaction()),
        older.accept('reaction', '6', reaction({ apply: 256 })),
        older.accept('reaction', '7', reaction({ emoji: 5 })),
        older.accept('profile', TOO_LARGE, { profile: { name: 'too large' } }),
        older.accept('broadcast', '8', { content: { content: 'when?', published: 'yesterday' } }),
        post('/v1/content/9/broadcast', note('a lost picture', { assets: [{ references: [{ referenceId: lost }] }] })),
      ]),
    ]);
    const cannotHold = 'the batch file cannot hold its announcement: ';
    const reasons: [string, RegExp][] = [
      [
        poison[0]!,
        new RegExp(`^${cannotHold}fromId: 9223372036854775808 is out of range: must be from 0 to ${LARGEST}`),
      ],
      [poison[1]!, new RegExp(`^${cannotHold}fromId: 18446744073709551615 is out of range`)],
      [poison[2]!, new RegExp(`^${cannotHold}apply: 256 is out of range: must be from 0 to 255`)],
      [poison[3]!, new RegExp(`^${cannotHold}emoji: 5 is not text$`)],
      [poison[4]!, new RegExp(`^${cannotHold}fromId: 9223372036854775808 is out of range`)],
      [poison[5]!, /^Invalid time value$/],
      [poison[6]!, new RegExp(`^asset ${lost} is no longer in the content store`)],
    ];
    const doomed = await doomedBatch(2);
    for (const referenceId of doomed)
      reasons.push([
        referenceId,
        new RegExp(`^the batch file could not be written: schema ${NO_SCHEMA} is not on chain$`),
      ]);

    // Nothing is left processing: every request ends.
    const records = new Map(
      (await stack.settled([...good, ...reasons.map(([id]) => id)], 150_000)).map((record) => [
        record.referenceId,
        record,
      ]),
    );
    const goodRecords = good.map((id) => records.get(id) as RequestRecord);
    expect(goodRecords.map((record) => [record.kind, record.state])).toEqual([
      ['broadcast', 'finalized'],
      ['broadcast', 'finalized'],
      ['reaction', 'finalized'],
      ['reaction', 'finalized'],
      ['reply', 'finalized'],
      ['profile', 'finalized'],
    ]);
    for (const [referenceId, reason] of reasons)
      expect({
        referenceId,
        state: records.get(referenceId)?.state,
        error: records.get(referenceId)?.error?.message,
      }).toEqual({ referenceId, state: 'failed', error: expect.stringMatching(reason) });

    // Each good request is on chain, in a batch file that holds the good requests' rows and no other.
    const queries = new ChainQueries(stack.chain.api);
    const fromIds = [2n, BigInt(LARGEST), 3n, BigInt(LARGEST), 4n, 5n];
    const files = new Map<string, string[]>();
    for (const record of goodRecords)
      files.set(record.batch!.cid, [...(files.get(record.batch!.cid) ?? []), record.referenceId]);
    for (const [index, record] of goodRecords.entries()) {
      const intent = (await queries.intentByName(`dsnp.${record.kind}`))!;
      const messages = await messagesOf(stack.chain, intent.intentId, record.block!.number, record.block!.number + 1);
      expect(messages.map((message) => message.cid)).toContain(record.batch!.cid);
      const rows = await batchRows(stack.kubo, record.batch!.cid);
      expect(rows.map((row) => row.fromId)).toContain(fromIds[index]);
      expect(rows).toHaveLength(files.get(record.batch!.cid)!.length);
    }

    // The poison rows were in batches with good ones, which went on without them.
    const refusedIn = logged('requests failed on their own; the batch goes on without them').map((entry) => ({
      batchId: entry.batchId as string,
      refused: Object.keys(entry.refused as object),
    }));
    expect(refusedIn.flatMap((entry) => entry.refused).sort()).toEqual(poison.slice(0, 5).sort());
    const written = new Map(logged('batch written').map((entry) => [entry.batchId as string, entry.cid as string]));
    for (const { batchId } of refusedIn) expect([...files.keys()]).toContain(written.get(batchId));

    // One webhook each: SUCCESS for the good, FAILED with the reason for the others.
    const expected = good.length + reasons.length;
    const notifications = (await receiver.waitFor(expected, 60_000)).map((webhook) => webhook.body as Notification);
    const byRequest = new Map(notifications.map((body) => [body.referenceId, body]));
    expect(byRequest.size).toBe(expected);
    for (const id of good) expect(byRequest.get(id)).toMatchObject({ status: 'SUCCESS' });
    for (const [referenceId] of reasons)
      expect(byRequest.get(referenceId)).toMatchObject({
        status: 'FAILED',
        error: { message: records.get(referenceId)!.error!.message },
      });
  }, 240_000);
});
