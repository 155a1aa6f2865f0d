import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { openChain, SchemaDirectory, type OpeningChain } from '@frequency-gateway/chain';
import { startDevchain, type Devchain } from '@frequency-gateway/devchain';
import { startRedisServer, type LocalRedis } from '@frequency-gateway/devstack';
import { AnnouncementType, readBatch } from '@frequency-gateway/dsnp';
import { createLogger, JobQueues, OutboundPolicy, Registry, type Job } from '@frequency-gateway/platform';
import { contentId, dsnpHash, EmbeddedStore, type StoredContent } from '@frequency-gateway/storage';
import { TransactionNotifier, WebhookDelivery } from '@frequency-gateway/webhooks';
import type { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { AnnouncementRow, CloseBatchJob } from '../src/jobs/batch.js';
import type { ContentKind } from '../src/jobs/document.js';
import type { PublishJobs } from '../src/jobs/publish.js';
import { contentRequests } from '../src/requests.js';
import { BatchBook } from '../src/worker/batch/book.js';
import { BatchWriter } from '../src/worker/batch/writer.js';
import { publishingMetrics } from '../src/worker/metrics.js';
import { OutcomeNotifier } from '../src/worker/notify/notifier.js';
import { RequestRecords } from '../src/worker/requestRecords.js';

const PREFIX = '{writer}';
const ACCEPTED = '2026-11-25T10:00:00.000Z';
const REFUSED = 'REFUSED-BY-THE-STORE';
const MISPLACED = 'STORED-ELSEWHERE';
const OTHER_CID = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';
const TOO_LARGE = (2n ** 63n).toString();

/**
 * The embedded store, failing as a store does only in conditions a test cannot bring about on demand: a document
 * containing REFUSED is refused, one containing MISPLACED is stored under another CID (a node with other import
 * settings), and while `down` nothing is stored and it does not answer.
 */
class FallibleStore extends EmbeddedStore {
  down = false;

  override async addAll(contents: readonly Uint8Array[], options?: { signal?: AbortSignal }): Promise<StoredContent[]> {
    if (this.down) throw new Error('connect ECONNREFUSED 127.0.0.1:5001');
    const texts = contents.map((content) => new TextDecoder().decode(content));
    if (texts.some((text) => text.includes(REFUSED))) throw new Error('the store refused the content');
    const stored = await super.addAll(contents, options);
    return stored.map((content, index) =>
      texts[index]!.includes(MISPLACED) ? { ...content, cid: OTHER_CID } : content,
    );
  }

  override async probe(): Promise<void> {
    if (this.down) throw new Error('connect ECONNREFUSED 127.0.0.1:5001');
    await super.probe();
  }
}

// The batch stage's writer on a real Redis, a devchain (each announcement schema's model as the chain has it) and
// the embedded store: rows no batch file can hold and documents the store refuses fail their requests alone while
// the rest of the batch is written and handed on; a batch whose job fails for good fails its requests, never
// strands them.
describe('the batch writer: a bad request fails alone, a failed batch strands none', () => {
  let server: LocalRedis;
  let redis: Redis;
  let devchain: Devchain;
  let chain: OpeningChain;
  let directory: SchemaDirectory;
  let storeDir: string;
  let store: FallibleStore;
  let queues: JobQueues;
  let publishQueue: Queue<PublishJobs['batch']>;
  let webhookQueue: Queue;
  let book: BatchBook;
  let writer: BatchWriter;
  let records: RequestRecords;
  const logger = createLogger({
    component: 'writer-test',
    level: 'fatal',
    pretty: false,
    destination: new PassThrough().resume(),
  });
  const metrics = new Registry();
  const status = () => contentRequests.store(redis, PREFIX, 3600);
  const schemaOf = async (intent: string) => (await directory.intentByName(intent))!.latestSchemaId!;
  const writerWith = (publisher: Queue<PublishJobs['batch']>) =>
    new BatchWriter({
      book,
      directory,
      store,
      records,
      publisher,
      batchRows: publishingMetrics(new Registry()).batchRows,
      logger,
    });

  beforeAll(async () => {
    [server, devchain] = await Promise.all([startRedisServer(), startDevchain()]);
    redis = new Redis(server.url);
    chain = openChain({ url: devchain.url, logger, metrics });
    directory = new SchemaDirectory(chain, { readyTimeoutMs: 30_000, intentTtlMs: 60_000 });
    storeDir = mkdtempSync(join(tmpdir(), 'batch-writer-'));
    store = new FallibleStore(storeDir);
    queues = new JobQueues({ redis: server.url, keyPrefix: PREFIX, logger, metrics });
    publishQueue = queues.queue<PublishJobs['batch']>('publishQueue');
    const settings = { maxAttempts: 3, retryBaseMs: 100, retryMaxMs: 1000, timeoutMs: 1000, concurrency: 1 };
    // Deliveries are only queued here, never sent.
    const delivery = new WebhookDelivery({
      queues,
      settings,
      logger,
      metrics,
      outbound: new OutboundPolicy({ mode: 'allowlist' }),
    });
    webhookQueue = delivery.queue as unknown as Queue;
    records = new RequestRecords(status(), {
      listener: new OutcomeNotifier(new TransactionNotifier(delivery, 'http://app.example'), '1'),
      finished: publishingMetrics(metrics).finished,
    });
    book = new BatchBook(redis, PREFIX, { maxRows: 1000 });
    writer = writerWith(publishQueue);
  }, 120_000);
  afterAll(async () => {
    await queues?.close();
    redis?.disconnect();
    await chain?.close();
    await devchain?.close();
    await server?.stop();
    if (storeDir) rmSync(storeDir, { recursive: true, force: true });
  });

  let counter = 0;
  /** A request in state processing whose row (and document) joined the open batch of the schema. */
  async function joined(schemaId: number, kind: ContentKind, row: AnnouncementRow, document?: string) {
    const referenceId = `${kind}-${++counter}`;
    await status().create(referenceId, { state: 'processing', kind });
    const outcome = await book.join(
      schemaId,
      { referenceId, acceptedAt: ACCEPTED },
      { row, ...(document === undefined ? {} : { document }) },
    );
    if (outcome.outcome !== 'joined') throw new Error(`${referenceId} did not join: ${outcome.outcome}`);
    return { referenceId, batchId: outcome.batchId };
  }

  /** A row of the kind and the document it points at (as the document stage makes them). */
  async function announcement(
    kind: ContentKind,
    fromId: string,
    text: string,
  ): Promise<{ row: AnnouncementRow; document?: string }> {
    const target = dsnpHash(new TextEncoder().encode('earlier'));
    if (kind === 'reaction')
      return {
        row: {
          announcementType: AnnouncementType.Reaction,
          fromId,
          emoji: '👍',
          apply: 1,
          inReplyTo: `dsnp://2/${target}`,
        },
      };
    if (kind === 'tombstone')
      return {
        row: {
          announcementType: AnnouncementType.Tombstone,
          fromId,
          targetAnnouncementType: 2,
          targetContentHash: target,
        },
      };
    const document = JSON.stringify({ type: kind === 'profile' ? 'Profile' : 'Note', content: text });
    const bytes = new TextEncoder().encode(document);
    const address = { contentHash: dsnpHash(bytes), url: `https://ipfs.example/ipfs/${await contentId(bytes)}` };
    const extra: Record<string, string | number> =
      kind === 'reply'
        ? { inReplyTo: `dsnp://2/${target}` }
        : kind === 'update'
          ? { targetAnnouncementType: 2, targetContentHash: target }
          : {};
    const type = {
      broadcast: AnnouncementType.Broadcast,
      reply: AnnouncementType.Reply,
      update: AnnouncementType.Update,
      profile: AnnouncementType.Profile,
    }[kind as 'broadcast'];
    return { row: { announcementType: type, fromId, ...address, ...extra }, document };
  }

  const close = (batchId: string, schemaId: number) => ({ data: { batchId, schemaId } }) as Job<CloseBatchJob>;
  const context = { log: logger, token: undefined, run: 'batch-writer-test' };
  const stateOf = async (referenceId: string) => status().get(referenceId);
  const webhookOf = async (referenceId: string, outcome: string) => {
    const job = await webhookQueue.getJob(`${referenceId}.${outcome}`);
    return job
      ? (JSON.parse(job.data.payload as string) as { status: string; error?: { message: string } })
      : undefined;
  };
  /** The publish job of a batch, and the rows of its file read back from the store. */
  async function published(batchId: string) {
    const job = await publishQueue.getJob(`batch-${batchId}`);
    if (!job) return undefined;
    const chunks: Uint8Array[] = [];
    for await (const chunk of store.read(job.data.cid)) chunks.push(chunk);
    return { referenceIds: job.data.referenceIds, rows: await readBatch(Buffer.concat(chunks)) };
  }
  const batchKeys = async (batchId: string) => redis.keys(`${PREFIX}:batch:${batchId}*`);

  it.each(['broadcast', 'reply', 'reaction', 'update', 'tombstone', 'profile'] as const)(
    '%s: a request from a user id the file cannot hold fails alone; the rest of its batch is written and handed on',
    async (kind) => {
      const schemaId = await schemaOf(`dsnp.${kind}`);
      const good = await announcement(kind, '7', `${kind} good`);
      const largest = await announcement(kind, (2n ** 63n - 1n).toString(), `${kind} largest`);
      const bad = await announcement(kind, TOO_LARGE, `${kind} too large`);
      const first = await joined(schemaId, kind, good.row, good.document);
      const edge = await joined(schemaId, kind, largest.row, largest.document);
      const poison = await joined(schemaId, kind, bad.row, bad.document);

      expect(await writer.process(close(first.batchId, schemaId), context)).toMatchObject({ rows: 2 });
      const batch = (await published(first.batchId))!;
      expect(batch.referenceIds).toEqual([first.referenceId, edge.referenceId]);
      expect(batch.rows.map((row) => row.fromId)).toEqual([7n, 2n ** 63n - 1n]);
      for (const { referenceId } of [first, edge]) expect((await stateOf(referenceId))?.state).toBe('batched');
      const reason =
        'the batch file cannot hold its announcement: fromId: 9223372036854775808 is out of range: must be from 0 to 9223372036854775807 (the file stores it as a signed 64-bit integer)';
      expect(await stateOf(poison.referenceId)).toMatchObject({ state: 'failed', error: { message: reason } });
      expect(await webhookOf(poison.referenceId, 'FAILED')).toMatchObject({
        status: 'FAILED',
        error: { message: reason },
      });
      expect(await batchKeys(first.batchId)).toEqual([]);
    },
  );

  it('fails each row the file cannot hold alone, whatever its problem, and publishes the rest', async () => {
    const schemaId = await schemaOf('dsnp.reaction');
    const good = (await announcement('reaction', '8', '')).row;
    const members = {
      good: await joined(schemaId, 'reaction', good),
      apply: await joined(schemaId, 'reaction', { ...good, apply: 256 }),
      emoji: await joined(schemaId, 'reaction', { ...good, emoji: 5 }),
      missing: await joined(schemaId, 'reaction', {
        announcementType: AnnouncementType.Reaction,
        fromId: '8',
        emoji: '👍',
        apply: 1,
      }),
      notANumber: await joined(schemaId, 'reaction', { ...good, fromId: 'eight' }),
      largest: await joined(schemaId, 'reaction', { ...good, fromId: (2n ** 64n - 1n).toString() }),
      good2: await joined(schemaId, 'reaction', { ...good, fromId: '9' }),
    };
    await writer.process(close(members.good.batchId, schemaId), context);
    const batch = (await published(members.good.batchId))!;
    expect(batch.referenceIds).toEqual([members.good.referenceId, members.good2.referenceId]);
    expect(batch.rows.map((row) => row.fromId)).toEqual([8n, 9n]);
    const problems = {
      apply: 'apply: 256 is out of range: must be from 0 to 255 (the file stores it as an unsigned 8-bit integer)',
      emoji: 'emoji: 5 is not text',
      missing: 'inReplyTo: is missing',
      notANumber: 'fromId: eight is not an integer',
      largest: 'fromId: 18446744073709551615 is out of range',
    };
    for (const [name, problem] of Object.entries(problems)) {
      const { referenceId } = members[name as keyof typeof problems];
      const record = await stateOf(referenceId);
      expect({ name, state: record?.state, message: (record?.error as { message: string }).message }).toEqual({
        name,
        state: 'failed',
        message: expect.stringContaining(problem),
      });
      expect(await webhookOf(referenceId, 'FAILED')).toMatchObject({
        error: { message: expect.stringContaining(problem) },
      });
    }
  });

  it('fails a request whose document the store refuses, or stores under another CID, alone', async () => {
    const schemaId = await schemaOf('dsnp.broadcast');
    const good = await announcement('broadcast', '11', 'kept');
    const refused = await announcement('broadcast', '12', `${REFUSED} here`);
    const misplaced = await announcement('broadcast', '13', `${MISPLACED} here`);
    const other = await announcement('broadcast', '14', 'kept too');
    const members = [good, refused, misplaced, other];
    const ids = [];
    for (const member of members) ids.push(await joined(schemaId, 'broadcast', member.row, member.document));
    await writer.process(close(ids[0]!.batchId, schemaId), context);
    const batch = (await published(ids[0]!.batchId))!;
    expect(batch.referenceIds).toEqual([ids[0]!.referenceId, ids[3]!.referenceId]);
    expect(batch.rows.map((row) => row.fromId)).toEqual([11n, 14n]);
    // The documents of the published rows are in the store, as their rows name them.
    for (const member of [good, other])
      expect(await store.stat(await contentId(new TextEncoder().encode(member.document)))).toBeDefined();
    expect(await stateOf(ids[1]!.referenceId)).toMatchObject({
      state: 'failed',
      error: { message: 'its document could not be stored: the store refused the content' },
    });
    expect(await stateOf(ids[2]!.referenceId)).toMatchObject({
      state: 'failed',
      error: { message: expect.stringMatching(/^its document could not be stored: IPFS stored a document as bafkrei/) },
    });
    for (const { referenceId } of ids.slice(1, 3)) expect(await webhookOf(referenceId, 'FAILED')).toBeDefined();
  });

  it('blames the store, not the requests, when it stores nothing: the job fails, then every request with its error', async () => {
    const schemaId = await schemaOf('dsnp.broadcast');
    const ids = [];
    for (const name of ['a', 'b', 'c']) {
      const member = await announcement('broadcast', '21', `store down ${name}`);
      ids.push(await joined(schemaId, 'broadcast', member.row, member.document));
    }
    const job = close(ids[0]!.batchId, schemaId);
    store.down = true;
    try {
      const error = await writer.process(job, context).catch((thrown: unknown) => thrown);
      expect(error).toEqual(new Error('connect ECONNREFUSED 127.0.0.1:5001'));
      // An attempt that failed failed no request: the job is retried.
      for (const { referenceId } of ids) expect((await stateOf(referenceId))?.state).toBe('processing');
      // Its last attempt failed.
      await writer.failed(job, error);
    } finally {
      store.down = false;
    }
    const message = 'the batch file could not be written: connect ECONNREFUSED 127.0.0.1:5001';
    for (const { referenceId } of ids) {
      expect(await stateOf(referenceId)).toMatchObject({ state: 'failed', error: { message } });
      expect(await webhookOf(referenceId, 'FAILED')).toMatchObject({ status: 'FAILED', error: { message } });
    }
    expect(await publishQueue.getJob(`batch-${ids[0]!.batchId}`)).toBeUndefined();
    expect(await batchKeys(ids[0]!.batchId)).toEqual([]);
    // Another job of the same batch (its timer) finds nothing to do.
    expect(await writer.process(job, context)).toBeUndefined();
  });

  it('hands a stored file on when the job fails after writing it, rather than failing its requests', async () => {
    const schemaId = await schemaOf('dsnp.broadcast');
    const member = await announcement('broadcast', '31', 'written, then the hand-off failed');
    const { referenceId, batchId } = await joined(schemaId, 'broadcast', member.row, member.document);
    const failing = writerWith({
      add: () => Promise.reject(new Error('publishQueue is away')),
    } as unknown as Queue<PublishJobs['batch']>);
    const job = close(batchId, schemaId);
    const error = await failing.process(job, context).catch((thrown: unknown) => thrown);
    expect(error).toEqual(new Error('publishQueue is away'));
    // The last attempt failed; the handler, with the queue back, hands the stored file on.
    await writer.failed(job, error);
    const batch = (await published(batchId))!;
    expect(batch.referenceIds).toEqual([referenceId]);
    expect((await stateOf(referenceId))?.state).toBe('batched');
    expect(await webhookOf(referenceId, 'FAILED')).toBeUndefined();
    expect(await batchKeys(batchId)).toEqual([]);
  });
});
