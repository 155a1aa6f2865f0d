import {
  callJson as call,
  startWebhookReceiver,
  waitUntil,
  type ReceivedWebhook,
  type WebhookReceiver,
} from '@frequency-gateway/devstack';
import { startComponentProcess, untilReady, type ComponentProcess } from '@frequency-gateway/devstack/gateway';
import { LOOPBACK_DESTINATIONS } from '@frequency-gateway/platform';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { AnnouncementType } from '@frequency-gateway/dsnp';
import { dsnpHash } from '@frequency-gateway/storage';
import { verifyWebhook } from '@frequency-gateway/webhooks';
import { CONTENT_WATCHER_QUEUES } from '../src/index.js';
import {
  asProvider,
  createOnChainIntent,
  FIRST_NEW_ID,
  publishBatches,
  startWatchedChain,
  storeNote,
  type PublishedBatch,
  type WatchedChain,
} from './support/chain.js';

const SECRET = 'watcher-webhook-secret-0123456789';

let pipeline: WatchedChain;
/** Reads the scanner's position. */
let admin: Redis;
let receiver: WebhookReceiver;
let api: ComponentProcess;
const workers: ComponentProcess[] = [];

const watcherEnv = () => ({
  REDIS_URL: pipeline.redis.url,
  CACHE_KEY_PREFIX: 'watcher',
  FREQUENCY_API_WS_URL: pipeline.devchain.url,
  IPFS_ENDPOINT: pipeline.kubo.apiUrl,
  IPFS_GATEWAY_URL: `${pipeline.kubo.gatewayUrl}/ipfs/[CID]`,
  WEBHOOK_SECRET: SECRET,
  STARTING_BLOCK: '1',
  READINESS_INTERVAL_MS: '250',
  WEBHOOK_RETRY_BASE_MS: '500',
  WEBHOOK_RETRY_MAX_MS: '4000',
  WEBHOOK_MAX_ATTEMPTS: '100',
  // The receiver listens on this machine's loopback interface, which the outbound policy refuses unless opened.
  OUTBOUND_ALLOWED_DESTINATIONS: LOOPBACK_DESTINATIONS,
});

async function startWorker(): Promise<ComponentProcess> {
  const worker = await startComponentProcess('content-watcher', 'worker', watcherEnv());
  workers.push(worker);
  await untilReady(worker);
  return worker;
}

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  pipeline = await startWatchedChain();
  admin = new Redis(pipeline.redis.url);
  api = await startComponentProcess('content-watcher', 'api', watcherEnv());
  await startWorker();
}, 180_000);

afterAll(async () => {
  await Promise.all([...watcherQueues.values()].flat().map((queue) => queue.close()));
  admin?.disconnect();
  await Promise.all(workers.map((worker) => worker.stop()));
  await api?.stop();
  await pipeline?.stop();
  await receiver?.stop();
});

const to = (path: string) => `${receiver.url}${path}`;
const at = (path: string) => receiver.received.filter((delivery) => delivery.path === path);

/**
 * Puts one announcement of each kind on chain, each in a batch file of its own, as a provider publishes them:
 * a broadcast from MSA 2, a reply from 3, a reaction from 4 and a tombstone from 2.
 */
async function publishAll(tag: string): Promise<PublishedBatch[]> {
  // Each round answers another target: the same announcement twice would be the same announcement.
  const targetHash = dsnpHash(new TextEncoder().encode(tag));
  const target = `dsnp://2/${targetHash}`;
  const [broadcast, reply] = await Promise.all([
    storeNote(pipeline.kubo, `broadcast ${tag}`),
    storeNote(pipeline.kubo, `reply ${tag}`),
  ]);
  const published = await publishBatches(pipeline, [
    { announcementType: AnnouncementType.Broadcast, fromId: 2n, ...broadcast },
    { announcementType: AnnouncementType.Reply, fromId: 3n, inReplyTo: target, ...reply },
    { announcementType: AnnouncementType.Reaction, fromId: 4n, emoji: '👍', apply: 1, inReplyTo: target },
    {
      announcementType: AnnouncementType.Tombstone,
      fromId: 2n,
      targetAnnouncementType: AnnouncementType.Reply,
      targetContentHash: targetHash,
    },
  ]);
  expect(published.map((batch) => batch.rows.length)).toEqual([1, 1, 1, 1]);
  return published;
}

/** The rows of the published batch files, as the webhooks should carry them. */
function expectedOf(published: PublishedBatch[]) {
  return published.flatMap(({ blockNumber, intentId, rows }) => rows.map((row) => ({ blockNumber, intentId, row })));
}

const finalized = async () => (await pipeline.chain.queries.finalizedBlock()).number;

/** Queue clients by keyspace (the guarded watcher has its own), closed after the file. */
const watcherQueues = new Map<string, Queue[]>();

/** Nothing left to search, read or deliver: no job of the watcher's queues waiting, running or delayed. */
async function queuesIdle(prefix: string): Promise<boolean> {
  let queues = watcherQueues.get(prefix);
  if (!queues) {
    queues = Object.values(CONTENT_WATCHER_QUEUES).map(
      (name) => new Queue(name, { connection: { url: pipeline.redis.url }, prefix: `${prefix}:bull` }),
    );
    watcherQueues.set(prefix, queues);
  }
  for (const queue of queues) {
    const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
    if (Object.values(counts).some((count) => count > 0)) return false;
  }
  return true;
}

/**
 * Until four more blocks are finalized and scanned (unless the scanner is paused) and every queue is idle: by
 * then anything that would arrive twice has arrived.
 */
async function settle({ prefix = '{watcher}', paused = false } = {}): Promise<void> {
  const then = await finalized();
  const scanned = async () => Number((await admin.get(`${prefix}:scanner:position`)) ?? 0) >= then + 4;
  await waitUntil(
    async () => (await finalized()) >= then + 4 && (paused || (await scanned())) && (await queuesIdle(prefix)),
    30_000,
    'four more blocks scanned and the queues idle',
  );
}

/** The workers' count of webhook deliveries refused and scheduled again (webhook_deliveries_total). */
async function retriedDeliveries(): Promise<number> {
  let total = 0;
  for (const worker of workers) {
    const text = await (await fetch(`${worker.url}/metrics`)).text();
    total += Number(/^webhook_deliveries_total\{[^}]*outcome="retry"[^}]*\} (\d+)/m.exec(text)?.[1] ?? 0);
  }
  return total;
}

/** What a delivery says, without where it came from: to compare deliveries of the same announcements. */
const essence = (delivery: ReceivedWebhook) => {
  const body = bodyOf(delivery);
  return JSON.stringify([body.blockNumber, body.intentId, body.announcement]);
};

const bodyOf = (delivery: ReceivedWebhook) =>
  delivery.body as { blockNumber: number; intentId: number; requestId?: string; announcement: Record<string, unknown> };

test('the OpenAPI document has the reference paths and operationIds, and the announcement webhook', async () => {
  const document = (await (await fetch(`${api.url}/docs/swagger.json`)).json()) as {
    paths: Record<
      string,
      Record<string, { operationId: string; requestBody?: unknown; responses: Record<string, unknown> }>
    >;
    webhooks: Record<string, unknown>;
  };
  const ours = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => `${method.toUpperCase()} ${path} ${operation.operationId}`),
  );
  expect(ours).toEqual(
    expect.arrayContaining([
      'POST /v1/scanner/reset ScanControllerV1_resetScanner_v1',
      'GET /v1/scanner/options ScanControllerV1_getWatchOptions_v1',
      'POST /v1/scanner/options ScanControllerV1_setWatchOptions_v1',
      'POST /v1/scanner/pause ScanControllerV1_pauseScanner_v1',
      'POST /v1/scanner/start ScanControllerV1_startScanner_v1',
      'POST /v1/search SearchControllerV1_search_v1',
      'POST /v1/webhooks WebhookControllerV1_registerWebhook_v1',
      'DELETE /v1/webhooks WebhookControllerV1_clearAllWebHooks_v1',
      'GET /v1/webhooks WebhookControllerV1_getRegisteredWebhooks_v1',
      'GET /healthz HealthController_healthz',
      'GET /livez HealthController_livez',
      'GET /readyz HealthController_readyz',
      'GET /metrics PrometheusController_index',
    ]),
  );
  expect(Object.keys(document.webhooks)).toEqual(['announcement']);
  // Every route that takes a body documents the 400 it answers to a bad one (and the platform's 413 for a body too
  // large, 431 for headers too large, 503 while Redis is away).
  const withBody = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([, operation]) => operation.requestBody !== undefined)
      .map(([method, operation]) => [`${method} ${path}`, Object.keys(operation.responses).sort()]),
  );
  expect(Object.fromEntries(withBody)).toEqual({
    'post /v1/scanner/reset': ['201', '400', '413', '431', '503'],
    'post /v1/scanner/options': ['201', '400', '413', '431', '503'],
    'post /v1/search': ['200', '400', '413', '431', '503'],
    'post /v1/webhooks': ['201', '400', '413', '431', '503'],
  });
});

test('registered webhooks get each announcement a provider publishes once, signed, with its fields', async () => {
  const all = await call(api.url, 'POST', '/v1/webhooks', {
    url: to('/all'),
    announcementTypes: ['broadcast', 'reply', 'reaction', 'tombstone', 'update', 'profile'],
  });
  expect(all.status).toBe(201);
  await call(api.url, 'POST', '/v1/webhooks', { url: to('/broadcasts'), announcementTypes: ['broadcast'] });
  const listed = await call(api.url, 'GET', '/v1/webhooks');
  expect(listed.body.registeredWebhooks).toEqual([
    { url: to('/all'), announcementTypes: ['tombstone', 'broadcast', 'reply', 'reaction', 'profile', 'update'] },
    { url: to('/broadcasts'), announcementTypes: ['broadcast'] },
  ]);

  const expected = expectedOf(await publishAll('one'));
  expect(expected).toHaveLength(4);
  await waitUntil(async () => at('/all').length >= 4 && at('/broadcasts').length >= 1, 60_000, 'the deliveries');
  await settle();
  expect(at('/all')).toHaveLength(4);
  expect(at('/broadcasts')).toHaveLength(1);

  for (const delivery of at('/all')) {
    expect(verifyWebhook(SECRET, delivery.headers, delivery.raw)).toBe(true);
    expect(delivery.body).not.toHaveProperty('requestId');
  }
  const got = at('/all')
    .map(bodyOf)
    .map((body) => ({ blockNumber: body.blockNumber, intentId: body.intentId, announcement: body.announcement }));
  const want = expected.map(({ blockNumber, intentId, row }) => ({
    blockNumber,
    intentId,
    announcement: Object.fromEntries(
      Object.entries(row).map(([key, value]) => [key, key === 'fromId' ? String(value) : value]),
    ),
  }));
  expect(got.sort((a, b) => a.intentId - b.intentId)).toEqual(want.sort((a, b) => a.intentId - b.intentId));
  expect(bodyOf(at('/broadcasts')[0]!).announcement).toMatchObject({ announcementType: 2, fromId: '2' });
}, 180_000);

test('a search over past blocks delivers the same announcements again, under its request id, to its own webhook', async () => {
  const upper = await finalized();
  const search = await call(api.url, 'POST', '/v1/search', {
    clientReferenceId: 'past',
    upperBoundBlock: upper,
    blockCount: upper,
    webhookUrl: to('/search'),
  });
  expect(search.status).toBe(200);
  expect(search.body).toEqual({ status: 200, jobId: 'past' });
  await waitUntil(async () => at('/search').length >= 4, 60_000, 'the search results');
  await settle();
  expect(at('/search').map(essence).sort()).toEqual(at('/all').map(essence).sort());
  for (const delivery of at('/search'))
    expect(bodyOf(delivery)).toMatchObject({ requestId: 'past', webhookUrl: to('/search') });

  // Only one user's announcements: the reply (from MSA 3).
  const filtered = await call(api.url, 'POST', '/v1/search', {
    blockCount: upper,
    upperBoundBlock: upper,
    filters: { dsnpIds: ['3'] },
    webhookUrl: to('/search-3'),
  });
  expect(filtered.status).toBe(200);
  await waitUntil(async () => at('/search-3').length >= 1, 60_000, 'the filtered search');
  await settle();
  expect(at('/search-3').map((delivery) => bodyOf(delivery).announcement)).toEqual([
    expect.objectContaining({ announcementType: 3, fromId: '3' }),
  ]);
  const refused = await call(api.url, 'POST', '/v1/search', { blockCount: 0, webhookUrl: 'ftp://x' });
  expect(refused.status).toBe(400);
  expect((refused.body.message as string[]).join('\n')).toMatch(/blockCount[\s\S]*webhookUrl/);
}, 180_000);

test('a search under any clientReferenceId a client chooses ("0", "a:b", which BullMQ would refuse as job ids) runs under it', async () => {
  const upper = await finalized();
  for (const clientReferenceId of ['0', 'a:b']) {
    const search = await call(api.url, 'POST', '/v1/search', {
      clientReferenceId,
      upperBoundBlock: upper,
      blockCount: upper,
      webhookUrl: to('/search-ids'),
    });
    expect(search.status).toBe(200);
    expect(search.body).toEqual({ status: 200, jobId: clientReferenceId });
  }
  const of = (requestId: string) => at('/search-ids').filter((delivery) => bodyOf(delivery).requestId === requestId);
  await waitUntil(async () => of('0').length >= 4 && of('a:b').length >= 4, 60_000, 'both searches');
  await settle();
  expect(of('0').map(essence).sort()).toEqual(at('/all').map(essence).sort());
  expect(of('a:b').map(essence).sort()).toEqual(at('/all').map(essence).sort());
}, 180_000);

test('control routes refuse a field they do not know, naming it, and change nothing', async () => {
  // The reference answered 201 to this and cleared the filter it meant to set (dsnpIds).
  const filter = { dsnpIds: ['2', '3', '4'] };
  expect((await call(api.url, 'POST', '/v1/scanner/options', filter)).status).toBe(201);
  const misnamed = await call(api.url, 'POST', '/v1/scanner/options', { msaIds: ['10074'] });
  expect(misnamed.status).toBe(400);
  expect(misnamed.body.message).toEqual(['body: unknown field "msaIds" (the fields are intentIds, dsnpIds)']);
  expect((await call(api.url, 'GET', '/v1/scanner/options')).body).toEqual(filter);
  expect((await call(api.url, 'POST', '/v1/scanner/options', {})).status).toBe(201);

  const refusals = await Promise.all([
    call(api.url, 'POST', '/v1/scanner/reset', { blockNumber: 1, rewind: 5 }),
    call(api.url, 'POST', '/v1/webhooks', { url: to('/x'), announcementTypes: ['broadcast'], secret: 's' }),
    call(api.url, 'POST', '/v1/search', { blockCount: 1, webhookUrl: to('/x'), filters: { msaIds: ['1'] } }),
  ]);
  expect(refusals.map((answer) => [answer.status, answer.body.message])).toEqual([
    [400, ['body: unknown field "rewind" (the fields are blockNumber, rewindOffset, immediate)']],
    [400, ['body: unknown field "secret" (the fields are url, announcementTypes)']],
    [400, ['body.filters: unknown field "msaIds" (the fields are intentIds, dsnpIds)']],
  ]);
  expect((await call(api.url, 'GET', '/v1/webhooks')).body.registeredWebhooks).not.toContainEqual(
    expect.objectContaining({ url: to('/x') }),
  );
});

test('two worker replicas deliver each new announcement once', async () => {
  await startWorker();
  const before = at('/all').length;
  await publishAll('two replicas');
  await waitUntil(async () => at('/all').length >= before + 4, 60_000, 'the deliveries');
  await settle();
  expect(at('/all')).toHaveLength(before + 4);
  expect(new Set(at('/all').map(essence)).size).toBe(before + 4);
}, 180_000);

test('workers killed and restarted resume where the scanner stopped: nothing missed, nothing twice; a reset repeats nothing', async () => {
  const before = at('/all').length;
  await Promise.all(workers.splice(0).map((worker) => worker.stop('SIGKILL')));
  await publishAll('while down');
  await startWorker();
  await waitUntil(async () => at('/all').length >= before + 4, 60_000, 'the deliveries after the restart');
  await settle();
  expect(at('/all')).toHaveLength(before + 4);

  // Scanning everything again finds every message again and delivers none of them twice.
  const reset = await call(api.url, 'POST', '/v1/scanner/reset', { blockNumber: 1 });
  expect(reset.status).toBe(201);
  await settle();
  await settle();
  expect(at('/all')).toHaveLength(before + 4);
  expect(new Set(at('/all').map(essence)).size).toBe(before + 4);
}, 180_000);

test('a receiver down through several attempts gets everything late, once', async () => {
  const before = at('/all').length;
  await receiver.stop();
  const retriedBefore = await retriedDeliveries();
  const published = await publishAll('receiver down');
  // Each of the four announcements refused at least twice on average, each retry later than the one before
  // (500 ms base, doubling): what a receiver down for a while sees, counted rather than slept through.
  await waitUntil(async () => (await retriedDeliveries()) - retriedBefore >= 8, 60_000, 'eight refused deliveries');
  expect(at('/all')).toHaveLength(before);
  expect(published).toHaveLength(4);
  await receiver.start();
  await waitUntil(async () => at('/all').length >= before + 4, 60_000, 'the late deliveries');
  await settle();
  expect(at('/all')).toHaveLength(before + 4);
  expect(new Set(at('/all').map(essence)).size).toBe(before + 4);
}, 240_000);

test('pause holds the scanner (whichever replica leads) until start; registrations are checked and removable', async () => {
  const before = at('/all').length;
  expect((await call(api.url, 'POST', '/v1/scanner/pause')).status).toBe(201);
  await publishAll('paused');
  await settle({ paused: true });
  expect(at('/all')).toHaveLength(before);
  expect((await call(api.url, 'POST', '/v1/scanner/start?immediate=true')).status).toBe(201);
  await waitUntil(async () => at('/all').length >= before + 4, 60_000, 'the deliveries after start');
  await settle();
  expect(at('/all')).toHaveLength(before + 4);

  const bad = await call(api.url, 'POST', '/v1/webhooks', { url: 'not a url', announcementTypes: ['shout'] });
  expect(bad.status).toBe(400);
  expect((bad.body.message as string[]).join('\n')).toMatch(/url[\s\S]*announcementTypes/);
  const none = await call(api.url, 'POST', '/v1/webhooks', { url: to('/x'), announcementTypes: [] });
  expect(none.status).toBe(400);
  expect((await call(api.url, 'DELETE', `/v1/webhooks?url=${encodeURIComponent(to('/broadcasts'))}`)).status).toBe(200);
  const listed = await call(api.url, 'GET', '/v1/webhooks');
  expect((listed.body.registeredWebhooks as { url: string }[]).map((entry) => entry.url)).toEqual([to('/all')]);

  // Credentials in a registered URL are kept and used, never shown back.
  const private_ = `http://hook-user:hook-pass-0xfeed@127.0.0.1:${receiver.port}/private?k=1`;
  expect((await call(api.url, 'POST', '/v1/webhooks', { url: private_, announcementTypes: ['profile'] })).status).toBe(
    201,
  );
  const shown = await call(api.url, 'GET', '/v1/webhooks');
  expect(shown.body.registeredWebhooks).toContainEqual({
    url: `http://***@127.0.0.1:${receiver.port}/private?k=1`,
    announcementTypes: ['profile'],
  });
  expect(JSON.stringify(shown.body)).not.toContain('hook-pass-0xfeed');
  expect((await call(api.url, 'DELETE', `/v1/webhooks?url=${encodeURIComponent(private_)}`)).status).toBe(200);
  expect((await call(api.url, 'GET', '/v1/webhooks')).body.registeredWebhooks).toHaveLength(1);
}, 180_000);

test('on-chain messages of a watched intent reach the webhooks registered for onChain, read with their Avro model', async () => {
  await createOnChainIntent(pipeline.chain, 'test.watcher');
  const queries = pipeline.chain.queries;
  const dsnp = await Promise.all(
    ['dsnp.broadcast', 'dsnp.reply', 'dsnp.reaction', 'dsnp.tombstone'].map(
      async (name) => (await queries.intentByName(name))!.intentId,
    ),
  );
  const options = await call(api.url, 'POST', '/v1/scanner/options', { intentIds: [...dsnp, FIRST_NEW_ID] });
  expect(options.status).toBe(201);
  expect((await call(api.url, 'GET', '/v1/scanner/options')).body).toEqual({ intentIds: [...dsnp, FIRST_NEW_ID] });
  await call(api.url, 'POST', '/v1/webhooks', { url: to('/on-chain'), announcementTypes: ['onChain'] });

  // {n: 42} in Avro: the zig-zag varint of 42; sent by the provider for itself.
  const { tx } = pipeline.chain.api;
  const [blockNumber] = await asProvider(pipeline.chain, [tx.messages.addOnchainMessage(null, FIRST_NEW_ID, '0x54')]);
  await waitUntil(async () => at('/on-chain').length >= 1, 60_000, 'the on-chain delivery');
  await settle();
  expect(at('/on-chain').map((delivery) => delivery.body)).toEqual([
    {
      blockNumber,
      schemaId: FIRST_NEW_ID,
      intentId: FIRST_NEW_ID,
      message: { msaId: '1', providerId: '1', payload: '0x54', decoded: { n: 42 } },
    },
  ]);
}, 180_000);

test('with the default outbound policy, loopback is refused at registration and, got past it, never sent to', async () => {
  // A second watcher on its own keys, without OUTBOUND_ALLOWED_DESTINATIONS: what a cluster gets by default.
  const env = { ...watcherEnv(), CACHE_KEY_PREFIX: 'guarded', OUTBOUND_ALLOWED_DESTINATIONS: '' };
  const workerLogs: string[] = [];
  const guardedApi = await startComponentProcess('content-watcher', 'api', env);
  const guardedWorker = await startComponentProcess('content-watcher', 'worker', env, { output: workerLogs });
  const redis = new Redis(pipeline.redis.url);
  const deliveries = new Queue('watcherDeliveryQueue', {
    connection: { url: pipeline.redis.url },
    prefix: '{guarded}:bull',
  });
  try {
    const port = receiver.port;
    const rule = 'destinations allowed: public addresses and OUTBOUND_ALLOWED_DESTINATIONS';
    const spellings = {
      [`http://127.0.0.1:${port}/guarded`]: '127.0.0.1 is a loopback address',
      [`http://2130706433:${port}/`]: '127.0.0.1 is a loopback address',
      [`http://0x7f.1:${port}/`]: '127.0.0.1 is a loopback address',
      [`http://[::1]:${port}/`]: '::1 is a loopback address',
      [`http://[::ffff:127.0.0.1]:${port}/`]: '::ffff:7f00:1 is a loopback address (IPv4-mapped 127.0.0.1)',
      [`http://localhost:${port}/`]: 'localhost resolves to 127.0.0.1, a loopback address',
      'http://169.254.169.254/latest/meta-data/': '169.254.169.254 is a link-local address',
      'http://0.0.0.0:6379/': '0.0.0.0 is an unspecified address',
      'http://10.0.0.1/hook': '10.0.0.1 is a private address',
    };
    for (const [url, problem] of Object.entries(spellings)) {
      const answer = await call(guardedApi.url, 'POST', '/v1/webhooks', { url, announcementTypes: ['broadcast'] });
      expect([answer.status, answer.body.message]).toEqual([400, [`body.url: ${problem}; ${rule}`]]);
    }
    const search = await call(guardedApi.url, 'POST', '/v1/search', { blockCount: 1, webhookUrl: to('/guarded') });
    expect([search.status, search.body.message]).toEqual([
      400,
      [`body.webhookUrl: 127.0.0.1 is a loopback address; ${rule}`],
    ]);
    expect((await call(guardedApi.url, 'GET', '/v1/webhooks')).body.registeredWebhooks).toEqual([]);

    // Past registration (written by an older version, or straight into Redis): the worker sends nothing.
    await redis.sadd(
      '{guarded}:webhooks:broadcast',
      to('/guarded'),
      `http://hook-user:hook-pass-0xfeed@127.0.0.1:${port}/guarded`,
    );
    expect((await call(guardedApi.url, 'GET', '/v1/webhooks')).body.registeredWebhooks).toEqual([
      { url: to('/guarded'), announcementTypes: ['broadcast'] },
      { url: `http://***@127.0.0.1:${port}/guarded`, announcementTypes: ['broadcast'] },
    ]);
    await publishAll('guarded');
    await waitUntil(async () => (await deliveries.getFailedCount()) >= 2, 60_000, 'dead-lettered deliveries');
    await settle({ prefix: '{guarded}' });
    const failed = await deliveries.getFailed();
    expect(failed.length).toBeGreaterThanOrEqual(2);
    for (const job of failed) {
      expect(job.failedReason).toBe(`destination refused: 127.0.0.1 is a loopback address; ${rule}`);
      expect(job.attemptsMade).toBe(1);
    }
    expect(await deliveries.getCompletedCount()).toBe(0);
    expect(at('/guarded')).toHaveLength(0);
    // One line per refused delivery, once all of them are in.
    const refusals = () => workerLogs.filter((line) => line.includes('webhook destination refused')).length;
    await waitUntil(async () => refusals() === (await deliveries.getFailedCount()), 10_000, 'one line per refusal');
    expect(workerLogs.join('\n')).not.toContain('hook-pass-0xfeed');
  } finally {
    await deliveries.close();
    redis.disconnect();
    await guardedWorker.stop();
    await guardedApi.stop();
  }
}, 240_000);
