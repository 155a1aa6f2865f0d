import { PassThrough } from 'node:stream';
import { startRedisServer, type LocalRedis } from '@frequency-gateway/devstack';
import { Redis } from 'ioredis';
import { z } from 'zod';
import {
  createHttpApp,
  createLogger,
  createMetricsRegistry,
  holdsClaim,
  listen,
  takeClaim,
  type RunningServer,
} from '../src/index.js';
import {
  RequestStatusStore,
  canonicalJson,
  referenceIdOf,
  requestStatusRoutes,
  serviceRequests,
  type RequestSnapshot,
} from '../src/requests/index.js';

const FINAL = ['finalized', 'failed'];

/** Reads a server-sent event stream until it ends, returning the data of each `state` event. */
async function readEvents(
  url: string,
  onOpen?: () => Promise<void>,
): Promise<{ status: number; events: RequestSnapshot[] }> {
  const response = await fetch(url);
  if (response.status !== 200) return { status: response.status, events: [] };
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const opened = onOpen?.();
  const text = await response.text();
  await opened;
  const events = text
    .split('\n\n')
    .filter((block) => block.startsWith('event: state'))
    .map(
      (block) =>
        JSON.parse(
          block
            .split('\n')
            .find((line) => line.startsWith('data: '))!
            .slice(6),
        ) as RequestSnapshot,
    );
  return { status: 200, events };
}

describe('request status', () => {
  let server: LocalRedis;
  let redis: Redis;
  let store: RequestStatusStore;
  let http: RunningServer;
  const shutdown = new AbortController();

  beforeAll(async () => {
    server = await startRedisServer();
    redis = new Redis(server.url);
    store = new RequestStatusStore(redis, { prefix: 't', ttlSeconds: 60, finalStates: FINAL });
    const logger = createLogger({
      component: 'test',
      level: 'fatal',
      pretty: false,
      destination: new PassThrough().resume(),
    });
    const { app } = createHttpApp({
      logger,
      metrics: createMetricsRegistry('test'),
      info: { title: 't', version: '1' },
      routes: requestStatusRoutes({ store, recordSchema: z.object({}), signal: shutdown.signal, heartbeatMs: 50 }),
    });
    http = await listen(app, 0, '127.0.0.1');
  });
  afterAll(async () => {
    shutdown.abort();
    await http?.close(1000);
    store?.close();
    redis?.disconnect();
    await server?.stop();
  });

  it('creates a record once, keeps its history, and ignores steps after a final state', async () => {
    expect(await store.create('r1', { state: 'queued', kind: 'broadcast', msaId: 5n })).toBe('created');
    expect(await store.create('r1', { state: 'queued', kind: 'broadcast' })).toBe('existing');
    expect(await store.update('r1', 'batched', { batch: { cid: 'bafy' } })).toBe(true);
    expect(await store.update('r1', 'finalized', { block: { number: 7, hash: '0x01' } })).toBe(true);
    expect(await store.update('r1', 'failed', { error: 'late' })).toBe(false);
    expect(await store.update('missing', 'batched')).toBe(false);
    const record = await store.get('r1');
    expect(record).toMatchObject({
      referenceId: 'r1',
      state: 'finalized',
      kind: 'broadcast',
      msaId: '5',
      version: 3,
      batch: { cid: 'bafy' },
      block: { number: 7, hash: '0x01' },
    });
    expect(record?.history.map((step) => step.state)).toEqual(['queued', 'batched', 'finalized']);
    expect(Date.parse(record!.createdAt)).toBeLessThanOrEqual(Date.parse(record!.updatedAt));
    expect(await redis.ttl('t:request:r1')).toBeGreaterThan(50);
  });

  it('changes nothing for a job run that lost its claim', async () => {
    await store.create('r-claimed', { state: 'queued', kind: 'broadcast' });
    const runA = { key: 't:claim:r-claimed', token: 'run-A' };
    await takeClaim(redis, runA, 60);
    expect(await holdsClaim(redis, runA)).toBe(true);
    // A later run of the same job takes the claim (and a hash field serves as well as a key).
    await takeClaim(redis, { ...runA, token: 'run-B' }, 60);
    expect(await holdsClaim(redis, runA)).toBe(false);
    expect(await store.update('r-claimed', 'failed', { error: 'stale' }, [runA])).toBe(false);
    expect((await store.get('r-claimed'))?.state).toBe('queued');
    expect(await store.update('r-claimed', 'submitted', {}, [{ ...runA, token: 'run-B' }])).toBe(true);
    const field = { key: 't:publication:p', field: 'run', token: 'run-C' };
    await takeClaim(redis, field, 60);
    expect(await store.update('r-claimed', 'finalized', {}, [field])).toBe(true);
    expect((await store.get('r-claimed'))?.history.map((step) => step.state)).toEqual([
      'queued',
      'submitted',
      'finalized',
    ]);
  });

  it('starts a failed request over when it is created again from a restartable state', async () => {
    await store.create('r2', { state: 'queued', kind: 'reply' });
    await store.update('r2', 'failed', { error: { message: 'no delegation' } });
    expect(await store.create('r2', { state: 'queued', kind: 'reply' }, ['failed'])).toBe('restarted');
    const record = await store.get('r2');
    expect(record).toMatchObject({ state: 'queued', version: 3 });
    expect(record).not.toHaveProperty('error');
    expect(record?.history.map((step) => step.state)).toEqual(['queued', 'failed', 'queued']);
  });

  it('serves the record, and 404 with the field named for an unknown or malformed id', async () => {
    const ok = await fetch(`${http.url}/v1/requests/r1`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ referenceId: 'r1', state: 'finalized' });
    const missing = await fetch(`${http.url}/v1/requests/nothing`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { message: string }).message).toMatch(/^referenceId: /);
    const bad = await fetch(`${http.url}/v1/requests/${encodeURIComponent('a b')}`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string[] }).message).toEqual([
      expect.stringMatching(/^params\.referenceId: /),
    ]);
  });

  it('streams every state change as an event and ends after the final one', async () => {
    await store.create('r3', { state: 'queued', kind: 'broadcast' });
    const { status, events } = await readEvents(`${http.url}/v1/requests/r3/events`, async () => {
      await store.update('r3', 'processing');
      await store.update('r3', 'submitted', { transaction: { hash: '0xab' } });
      await store.update('r3', 'finalized', { block: { number: 9, hash: '0xcd' } });
    });
    expect(status).toBe(200);
    expect(events.map((event) => [event.state, event.version])).toEqual([
      ['queued', 1],
      ['processing', 2],
      ['submitted', 3],
      ['finalized', 4],
    ]);
    expect(events[3]).toMatchObject({ transaction: { hash: '0xab' }, block: { number: 9 } });
  });

  it('answers a finished request with its final state and ends; 404 for an unknown one', async () => {
    const { events } = await readEvents(`${http.url}/v1/requests/r1/events`);
    expect(events.map((event) => event.state)).toEqual(['finalized']);
    expect((await readEvents(`${http.url}/v1/requests/none/events`)).status).toBe(404);
  });

  it('ends open streams when the component shuts down', async () => {
    await store.create('r4', { state: 'queued', kind: 'broadcast' });
    const { events } = await readEvents(`${http.url}/v1/requests/r4/events`, async () => {
      // A stream that has been open a moment (its first event written), not one ended as it opens; nothing
      // outside the server tells when the event left.
      await new Promise((resolve) => setTimeout(resolve, 100));
      shutdown.abort();
    });
    expect(events.map((event) => event.state)).toEqual(['queued']);
  });
});

describe('referenceIds', () => {
  // Ids must not change between versions: a request posted again after an upgrade is still the same request.
  it('are the same for the same request whatever its key order, and stable across versions', () => {
    const body = {
      content: { content: 'héllo 🌍', published: '2024-05-01T12:00:00Z', tag: [{ type: 'hashtag', name: 'x' }] },
    };
    const id = referenceIdOf('broadcast', { msaId: '2', body: { content: { ...body.content, z: undefined, A: 1 } } });
    expect(id).toBe('g8qirAB111-UCHbxJGmfQEW_DLH-EfV9MhAqcOlRebk');
    const reordered = {
      body: {
        content: {
          A: 1,
          tag: [{ name: 'x', type: 'hashtag' }],
          published: body.content.published,
          content: body.content.content,
        },
      },
      msaId: '2',
    };
    expect(referenceIdOf('broadcast', reordered)).toBe(id);
    expect(referenceIdOf('reply', reordered)).not.toBe(id);
    const mixed = { list: [1, 'two', null, { b: 2n, a: [true, false] }], é: 'accent', ZZ: 0.5, aa: -3 };
    expect(referenceIdOf('batch', mixed)).toBe('ouwqNMb12wcrQHKQi0oYHFh4NybMkzJsQKl1Ya7HG6k');
    expect(canonicalJson(mixed)).toBe(
      '{"ZZ":0.5,"aa":-3,"list":[1,"two",null,{"a":[true,false],"b":"2"}],"é":"accent"}',
    );
  });
});

describe('serviceRequests', () => {
  const declared = () =>
    serviceRequests({
      intake: 'notes',
      states: ['queued', 'written', 'finalized', 'failed'],
      recordId: 'NoteRequestDto',
      fields: { kind: z.enum(['note']) },
      outcomeFields: { receipt: z.string().optional() },
    });

  it('declares the record a service shows: its states, its fields, the common ones, in one schema', () => {
    const { intake, recordSchema } = declared();
    expect(intake).toBe('notes');
    const record = {
      referenceId: 'r',
      state: 'written',
      kind: 'note',
      version: 2,
      createdAt: 'a',
      updatedAt: 'b',
      history: [{ state: 'queued', at: 'a' }],
    };
    expect(recordSchema.parse(record)).toEqual(record);
    expect(recordSchema.safeParse({ ...record, state: 'batched' }).success).toBe(false);
    expect(Object.keys(recordSchema.shape)).toEqual([
      'referenceId',
      'state',
      'kind',
      'version',
      'createdAt',
      'updatedAt',
      'receipt',
      'history',
    ]);
  });

  it('refuses states without queued or the final ones', () => {
    expect(() =>
      serviceRequests({ intake: 'x', states: ['queued', 'done'], recordId: 'X', fields: {}, outcomeFields: {} }),
    ).toThrow('the request states of x lack finalized, failed');
  });

  it('stores records whose finalized and failed states are final', async () => {
    const server = await startRedisServer();
    const redis = new Redis(server.url);
    try {
      const store = declared().store(redis, 'declared', 60);
      await store.create('n1', { state: 'queued', kind: 'note' });
      expect(await store.update('n1', 'failed', { error: { message: 'no' } })).toBe(true);
      expect(await store.update('n1', 'written')).toBe(false);
      expect(await store.get('n1')).toMatchObject({ state: 'failed' });
    } finally {
      redis.disconnect();
      await server.stop();
    }
  });
});
