import { callJson } from '@frequency-gateway/devstack';
import type { Queue } from 'bullmq';
import { dsnpHash } from '@frequency-gateway/storage';
import { CONTENT_PUBLISHING_QUEUES } from '../src/queues.js';
import type { ContentRequestJob } from '../src/jobs/document.js';
import { contentRequests } from '../src/requests.js';
import { form, png, startApiStack, TEST_KEYSPACE, type ApiStack } from './support/stack.js';

const HASH = dsnpHash(new TextEncoder().encode('target'));
const URI = `dsnp://42/${HASH}`;
const PUBLISHED = '2024-05-01T12:00:00Z';

describe('content routes', () => {
  let stack: ApiStack;
  let requests: Queue<ContentRequestJob>;
  let imageCid: string;
  let parquetCid: string;

  const post = (method: string, path: string, body?: unknown) => callJson(stack.url, method, path, body);
  const problems = async (method: string, path: string, body: unknown): Promise<string[]> => {
    const answer = await post(method, path, body);
    expect(answer.status).toBe(400);
    return answer.body.message as string[];
  };
  const jobOf = async (referenceId: string) => (await stack.jobOf(requests, referenceId))!;

  beforeAll(async () => {
    stack = await startApiStack();
    requests = stack.queue(CONTENT_PUBLISHING_QUEUES.request);
    const uploaded = await fetch(`${stack.url}/v2/asset/upload`, {
      method: 'POST',
      body: form([
        { name: 'a.png', type: 'image/png', bytes: png(2000) },
        { name: 'b.parquet', type: 'application/vnd.apache.parquet', bytes: png(300, 7) },
      ]),
    });
    [imageCid, parquetCid] = ((await uploaded.json()) as { files: { cid: string }[] }).files.map(
      (file) => file.cid,
    ) as [string, string];
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('accepts a broadcast: 202 with a referenceId, a durable job carrying the validated body and its assets', async () => {
    const body = {
      content: {
        content: 'Hello, DSNP',
        published: PUBLISHED,
        name: 'A note',
        assets: [
          { references: [{ referenceId: imageCid, height: 20, width: '30', duration: 'PT1M' }], name: 'pic' },
          { isLink: true, href: 'https://example.com/a', name: 'link' },
        ],
        tag: [
          { type: 'hashtag', name: 'hello' },
          { type: 'mention', mentionedId: 'dsnp://7' },
        ],
        location: { name: 'Home', latitude: 47.6, longitude: -122.3, units: 'km', accuracy: 94, radius: 2 },
        unknownField: 'dropped',
      },
      extra: true,
    };
    const answer = await post('POST', '/v1/content/2/broadcast', body);
    expect(answer.status).toBe(202);
    expect(Object.keys(answer.body)).toEqual(['referenceId']);
    const { referenceId } = answer.body as { referenceId: string };
    expect(referenceId).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const job = await jobOf(referenceId);
    expect(job.name).toBe('content');
    expect(job.data).toMatchObject({ referenceId, kind: 'broadcast', msaId: '2' });
    expect(job.data.body).toEqual({
      content: {
        content: 'Hello, DSNP',
        published: PUBLISHED,
        name: 'A note',
        assets: [
          { references: [{ referenceId: imageCid, height: 20, width: 30, duration: 'PT1M' }], name: 'pic' },
          { isLink: true, href: 'https://example.com/a', name: 'link' },
        ],
        tag: [
          { type: 'hashtag', name: 'hello' },
          { type: 'mention', mentionedId: 'dsnp://7' },
        ],
        location: { name: 'Home', latitude: 47.6, longitude: -122.3, units: 'km', accuracy: 94, radius: 2 },
      },
    });
    expect(job.data.assets).toEqual({
      [imageCid]: { cid: imageCid, dsnpHash: dsnpHash(png(2000)), mimeType: 'image/png', size: 2000, type: 'image' },
    });

    // The same request again: same referenceId, still one job.
    const again = await post('POST', '/v1/content/2/broadcast', body);
    expect(again.body.referenceId).toBe(referenceId);
    await stack.drained();
    expect(await requests.getJobCounts('waiting')).toMatchObject({ waiting: 1 });
    // Another user, another request.
    expect((await post('POST', '/v1/content/3/broadcast', body)).body.referenceId).not.toBe(referenceId);
  });

  it('records the request: GET /v1/requests/{referenceId} and its event stream show it queued', async () => {
    const { body } = await post('POST', '/v1/content/2/broadcast', {
      content: { content: 'status', published: PUBLISHED },
    });
    const status = await post('GET', `/v1/requests/${body.referenceId}`);
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({
      referenceId: body.referenceId,
      state: 'queued',
      kind: 'broadcast',
      msaId: '2',
      version: 1,
      history: [{ state: 'queued', at: expect.any(String) }],
    });
    const events = new AbortController();
    const stream = await fetch(`${stack.url}/v1/requests/${body.referenceId}/events`, { signal: events.signal });
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = stream.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toMatch(/^event: state\nid: 1\ndata: \{.*"state":"queued"/);
    events.abort();
    expect((await post('GET', '/v1/requests/unknown')).status).toBe(404);
  });

  it('starts a failed request over when it is posted again', async () => {
    const body = { content: { content: 'retry me', published: PUBLISHED } };
    const { referenceId } = (await post('POST', '/v1/content/9/broadcast', body)).body as { referenceId: string };
    const job = await jobOf(referenceId);
    await job.remove();
    const status = contentRequests.store(stack.redis, TEST_KEYSPACE, 60);
    await status.update(referenceId, 'failed', { error: { message: 'no delegation' } });
    expect((await post('POST', '/v1/content/9/broadcast', body)).body.referenceId).toBe(referenceId);
    expect(await stack.jobOf(requests, referenceId)).toBeDefined();
    expect((await post('GET', `/v1/requests/${referenceId}`)).body.state).toBe('queued');
  });

  it('accepts replies, reactions, updates and tombstones (both routes give the same tombstone)', async () => {
    const note = { content: 'reply', published: '2024-05-01' };
    const reply = await post('POST', '/v1/content/5/reply', { inReplyTo: URI, content: note });
    expect(reply.status).toBe(202);
    expect((await jobOf(reply.body.referenceId)).data).toMatchObject({
      kind: 'reply',
      body: { inReplyTo: URI, content: note },
    });
    const reaction = await post('POST', '/v1/content/5/reaction', { emoji: '🤌🏼', apply: 5, inReplyTo: URI });
    expect(reaction.status).toBe(202);
    expect((await jobOf(reaction.body.referenceId)).data).toMatchObject({
      kind: 'reaction',
      body: { emoji: '🤌🏼', apply: 5, inReplyTo: URI },
      assets: {},
    });
    const update = await post('PUT', '/v1/content/5', {
      targetAnnouncementType: 'reply',
      targetContentHash: HASH,
      content: note,
    });
    expect(update.status).toBe(202);
    expect((await jobOf(update.body.referenceId)).data.kind).toBe('update');
    const tombstone = { targetAnnouncementType: 'broadcast', targetContentHash: HASH };
    const v1 = await post('DELETE', '/v1/content/5', tombstone);
    const v2 = await post('POST', '/v2/content/5/tombstones', tombstone);
    expect([v1.status, v2.status]).toEqual([202, 202]);
    expect(v2.body.referenceId).toBe(v1.body.referenceId);
    expect((await jobOf(v1.body.referenceId)).data).toMatchObject({ kind: 'tombstone', msaId: '5', body: tombstone });
  });

  it('accepts a profile with 202 and no body; icons must be uploaded images', async () => {
    const profile = {
      profile: {
        name: 'Ada',
        summary: 'Mathematician',
        icon: [{ referenceId: imageCid, width: 64, height: 64 }],
        published: PUBLISHED,
      },
    };
    const answer = await post('PUT', '/v1/profile/8', profile);
    expect(answer.status).toBe(202);
    expect(answer.body).toBeUndefined();
    const referenceId = answer.headers.get('location')!.split('/').pop()!;
    expect((await jobOf(referenceId)).data).toMatchObject({
      kind: 'profile',
      msaId: '8',
      assets: { [imageCid]: { mimeType: 'image/png' } },
    });
    expect(await problems('PUT', '/v1/profile/8', { profile: { icon: [{ referenceId: parquetCid }] } })).toEqual([
      `body.profile.icon.0.referenceId: asset ${parquetCid} is application/vnd.apache.parquet, which is not allowed here`,
    ]);
  });

  it('refuses assets that were not uploaded here, or whose type a note cannot carry, naming each', async () => {
    const messages = await problems('POST', '/v1/content/2/broadcast', {
      content: {
        content: 'x',
        published: PUBLISHED,
        assets: [{ references: [{ referenceId: 'bafkreiunknown' }, { referenceId: parquetCid }] }],
      },
    });
    expect(messages).toEqual([
      'body.content.assets.0.references.0.referenceId: no asset bafkreiunknown was uploaded to this service',
      `body.content.assets.0.references.1.referenceId: asset ${parquetCid} is application/vnd.apache.parquet, which is not allowed here`,
    ]);
  });

  const note = (fields: Record<string, unknown>) => ({ content: { content: 'x', published: PUBLISHED, ...fields } });
  const cases: [string, string, string, unknown, RegExp][] = [
    ['msaId zero', 'POST', '/v1/content/0/broadcast', note({}), /^params\.msaId: must be a positive integer/],
    ['msaId text', 'POST', '/v1/content/abc/broadcast', note({}), /^params\.msaId: /],
    [
      'msaId over u64',
      'POST',
      '/v1/content/18446744073709551616/broadcast',
      note({}),
      /^params\.msaId: must be below 2\^64/,
    ],
    ['no content', 'POST', '/v1/content/2/broadcast', {}, /^body\.content: is required$/],
    [
      'empty text',
      'POST',
      '/v1/content/2/broadcast',
      { content: { content: '', published: PUBLISHED } },
      /^body\.content\.content: must not be empty/,
    ],
    [
      'no date',
      'POST',
      '/v1/content/2/broadcast',
      { content: { content: 'x' } },
      /^body\.content\.published: is required/,
    ],
    [
      'impossible date',
      'POST',
      '/v1/content/2/broadcast',
      { content: { content: 'x', published: '2023-02-29T10:00:00Z' } },
      /^body\.content\.published: must be an ISO 8601/,
    ],
    [
      'space separator',
      'POST',
      '/v1/content/2/broadcast',
      { content: { content: 'x', published: '2024-01-01 10:00:00Z' } },
      /^body\.content\.published: /,
    ],
    [
      'link without href',
      'POST',
      '/v1/content/2/broadcast',
      note({ assets: [{ isLink: true }] }),
      /^body\.content\.assets\.0\.href: is required for a link/,
    ],
    [
      'ftp href',
      'POST',
      '/v1/content/2/broadcast',
      note({ assets: [{ isLink: true, href: 'ftp://x/y' }] }),
      /^body\.content\.assets\.0\.href: must be an http or https URL/,
    ],
    [
      'no references',
      'POST',
      '/v1/content/2/broadcast',
      note({ assets: [{ name: 'x' }] }),
      /^body\.content\.assets\.0\.references: must list at least one/,
    ],
    [
      'twice the same reference',
      'POST',
      '/v1/content/2/broadcast',
      note({ assets: [{ references: [{ referenceId: 'a' }, { referenceId: 'a' }] }] }),
      /^body\.content\.assets\.0\.references\.1\.referenceId: is listed twice/,
    ],
    [
      'bad duration',
      'POST',
      '/v1/content/2/broadcast',
      note({ assets: [{ references: [{ referenceId: 'a', duration: '10 minutes' }] }] }),
      /^body\.content\.assets\.0\.references\.0\.duration: must be an ISO 8601 duration/,
    ],
    [
      'negative height',
      'POST',
      '/v1/content/2/broadcast',
      note({ assets: [{ references: [{ referenceId: 'a', height: -1 }] }] }),
      /^body\.content\.assets\.0\.references\.0\.height: must be a whole number/,
    ],
    [
      'hashtag without name',
      'POST',
      '/v1/content/2/broadcast',
      note({ tag: [{ type: 'hashtag' }] }),
      /^body\.content\.tag\.0\.name: is required for a hashtag/,
    ],
    [
      'mention of a non-user',
      'POST',
      '/v1/content/2/broadcast',
      note({ tag: [{ type: 'mention', mentionedId: '@bob' }] }),
      /^body\.content\.tag\.0\.mentionedId: must be a DSNP user URI/,
    ],
    [
      'unknown tag type',
      'POST',
      '/v1/content/2/broadcast',
      note({ tag: [{ type: 'emoji' }] }),
      /^body\.content\.tag\.0\.type: /,
    ],
    [
      'location without name',
      'POST',
      '/v1/content/2/broadcast',
      note({ location: { latitude: 1 } }),
      /^body\.content\.location\.name: is required/,
    ],
    [
      'latitude 91',
      'POST',
      '/v1/content/2/broadcast',
      note({ location: { name: 'x', latitude: 91 } }),
      /^body\.content\.location\.latitude: must be from -90 to 90/,
    ],
    [
      'longitude 181',
      'POST',
      '/v1/content/2/broadcast',
      note({ location: { name: 'x', longitude: 181 } }),
      /^body\.content\.location\.longitude: must be from -180 to 180/,
    ],
    [
      'accuracy 101',
      'POST',
      '/v1/content/2/broadcast',
      note({ location: { name: 'x', accuracy: 101 } }),
      /^body\.content\.location\.accuracy: must be a percentage/,
    ],
    [
      'radius -1',
      'POST',
      '/v1/content/2/broadcast',
      note({ location: { name: 'x', radius: -1 } }),
      /^body\.content\.location\.radius: must not be negative/,
    ],
    [
      'units yards',
      'POST',
      '/v1/content/2/broadcast',
      note({ location: { name: 'x', units: 'yards' } }),
      /^body\.content\.location\.units: /,
    ],
    [
      'reply to a hex hash',
      'POST',
      '/v1/content/2/reply',
      { inReplyTo: 'dsnp://1/0x1234', content: note({}).content },
      /^body\.inReplyTo: must be a DSNP content URI/,
    ],
    [
      'reaction with text',
      'POST',
      '/v1/content/2/reaction',
      { emoji: 'smile', apply: 1, inReplyTo: URI },
      /^body\.emoji: must be one or more emoji/,
    ],
    [
      'reaction strength 256',
      'POST',
      '/v1/content/2/reaction',
      { emoji: '👍', apply: 256, inReplyTo: URI },
      /^body\.apply: must be an integer from 0 to 255/,
    ],
    [
      'reaction without target',
      'POST',
      '/v1/content/2/reaction',
      { emoji: '👍', apply: 1 },
      /^body\.inReplyTo: is required/,
    ],
    [
      'update of a reaction',
      'PUT',
      '/v1/content/2',
      { targetAnnouncementType: 'reaction', targetContentHash: HASH, content: note({}).content },
      /^body\.targetAnnouncementType: /,
    ],
    [
      'update with a bad hash',
      'PUT',
      '/v1/content/2',
      { targetAnnouncementType: 'reply', targetContentHash: 'abc', content: note({}).content },
      /^body\.targetContentHash: must be a DSNP content hash/,
    ],
    [
      'tombstone with a bad hash',
      'POST',
      '/v2/content/2/tombstones',
      { targetAnnouncementType: 'reply', targetContentHash: '0x12' },
      /^body\.targetContentHash: must be a DSNP content hash/,
    ],
    [
      'v1 tombstone without type',
      'DELETE',
      '/v1/content/2',
      { targetContentHash: HASH },
      /^body\.targetAnnouncementType: is required/,
    ],
    [
      'profile date',
      'PUT',
      '/v1/profile/2',
      { profile: { published: 'yesterday' } },
      /^body\.profile\.published: must be an ISO 8601/,
    ],
    ['profile missing', 'PUT', '/v1/profile/2', {}, /^body\.profile: is required/],
  ];
  it.each(cases)('400 naming the field: %s', async (_name, method, path, body, expected) => {
    const messages = await problems(method, path, body);
    expect(messages).toEqual([expect.stringMatching(expected)]);
  });

  // MSA ids are u64 on chain, but the announcement's batch file stores the user as a signed 64-bit integer: an id
  // of 2^63 or more was accepted, failed the batch file, and left every request of its batch processing for ever.
  it.each([
    ['a broadcast', 'POST', 'broadcast', { content: { content: 'edge', published: PUBLISHED } }],
    ['a reaction', 'POST', 'reaction', { emoji: '👍', apply: 1, inReplyTo: URI }],
  ])(
    'refuses %s from an msaId the announcement file cannot hold; 2^63 − 1 passes the rule (and is looked up)',
    async (_name, method, route, body) => {
      const rule =
        'params.msaId: must be at most 9223372036854775807 (the announcement file stores it as a signed 64-bit integer)';
      for (const msaId of [2n ** 63n, 2n ** 64n - 1n]) {
        const answer = await post(method, `/v1/content/${msaId}/${route}`, body);
        expect(answer.status).toBe(400);
        expect(answer.body).toMatchObject({ statusCode: 400, error: 'Bad Request', message: [rule] });
      }
      const largest = await post(method, `/v1/content/${2n ** 63n - 1n}/${route}`, body);
      expect(largest.body).toMatchObject({
        statusCode: 400,
        message: 'params.msaId: MSA 9223372036854775807 does not exist',
      });
    },
  );

  it('documents the largest msaId of every content route', async () => {
    const doc = (await post('GET', '/docs/swagger.json')).body as {
      paths: Record<string, Record<string, { parameters?: { name: string; schema: { description?: string } }[] }>>;
    };
    const routes = Object.entries(doc.paths).flatMap(([path, operations]) =>
      path.startsWith('/v1/content/{msaId}') ||
      path.startsWith('/v2/content/{msaId}/tombstones') ||
      path === '/v1/profile/{msaId}'
        ? Object.entries(operations).map(([method, operation]) => ({
            route: `${method} ${path}`,
            description: operation.parameters?.find((parameter) => parameter.name === 'msaId')?.schema.description,
          }))
        : [],
    );
    expect(routes).toHaveLength(7);
    for (const { route, description } of routes)
      expect({ route, description }).toEqual({
        route,
        description: expect.stringContaining('1 to 9223372036854775807'),
      });
  });

  it('reports every bad field of one body at once', async () => {
    const messages = await problems('POST', '/v1/content/2/reaction', { emoji: 'x', apply: -1, inReplyTo: 'y' });
    expect(messages.map((message) => message.split(':')[0])).toEqual(['body.emoji', 'body.apply', 'body.inReplyTo']);
  });

  it('answers a body that is not JSON with 400', async () => {
    const response = await fetch(`${stack.url}/v1/content/2/broadcast`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"content":',
    });
    expect(response.status).toBe(400);
  });
});
