import { readFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { startDevchain } from '@frequency-gateway/devchain';
import { callJson, waitUntil } from '@frequency-gateway/devstack';
import { startComponent, type StartedComponent } from '@frequency-gateway/platform';
import { contentPublishingApi } from '../src/api/component.js';
import { contentId } from '@frequency-gateway/storage';
import { form, png, startApiStack, TEST_PREFIX, type ApiStack } from './support/stack.js';

interface SpecOperation {
  method: string;
  path: string;
  operationId: string;
}

const spec = JSON.parse(readFileSync(new URL('fixtures/spec-operations.json', import.meta.url), 'utf8')) as {
  operations: SpecOperation[];
};

interface OpenApiOperation {
  deprecated?: boolean;
  requestBody?: { content?: Record<string, { schema?: { required?: string[]; $ref?: string } }> };
  responses?: Record<string, unknown>;
}

interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
}

/** Every `pattern` anywhere in the document. */
function patternsIn(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(patternsIn);
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, inner]) =>
    key === 'pattern' && typeof inner === 'string' ? [inner] : patternsIn(inner),
  );
}

describe('content publishing api', () => {
  let stack: ApiStack;
  const ready = () => fetch(`${stack.url}/readyz`).then((response) => response.status);
  const broadcast = (text: string) =>
    callJson(stack.url, 'POST', '/v1/content/2/broadcast', { content: { content: text, published: '2024-05-01' } });

  beforeAll(async () => {
    stack = await startApiStack({ READINESS_INTERVAL_MS: '200', READINESS_TIMEOUT_MS: '500' });
  });
  afterAll(async () => stack?.close());

  it('documents every operation of the specification with its operationId', async () => {
    const doc = (await callJson(stack.url, 'GET', '/docs/swagger.json')).body as {
      paths: Record<string, Record<string, { operationId: string }>>;
    };
    const missing = spec.operations.filter(
      (operation) => doc.paths[operation.path]?.[operation.method.toLowerCase()]?.operationId !== operation.operationId,
    );
    expect(spec.operations).toHaveLength(19);
    expect(missing).toEqual([]);
    expect(doc.paths['/v1/requests/{referenceId}']?.get?.operationId).toBe('RequestControllerV1_getRequest_v1');
    expect(doc.paths['/v1/content/{msaId}']?.delete).toMatchObject({ deprecated: true });
  });

  it('publishes an OpenAPI document generic JSON Schema tools can read, with what the reference says', async () => {
    const doc = (await callJson(stack.url, 'GET', '/docs/swagger.json')).body as OpenApiDocument;
    // JSON Schema patterns are ECMA-262 regular expressions without flags: nothing that needs `u` (\u{...},
    // \p{...}), which without it would compile but mean something else.
    const patterns = patternsIn(doc);
    expect(patterns.length).toBeGreaterThan(0);
    for (const pattern of patterns) {
      expect({ pattern, unicodeOnly: /\\[uUpP]\{/.test(pattern) }).toEqual({ pattern, unicodeOnly: false });
      expect(() => new RegExp(pattern)).not.toThrow();
    }
    // Multipart bodies require their files.
    const multipart = Object.entries(doc.paths).flatMap(([path, operations]) =>
      Object.entries(operations).flatMap(([method, operation]) => {
        const schema = operation.requestBody?.content?.['multipart/form-data']?.schema;
        return schema ? [{ operation: `${method} ${path}`, required: schema.required ?? [] }] : [];
      }),
    );
    expect(multipart.map(({ operation }) => operation).sort()).toEqual([
      'post /v2/asset/upload',
      'post /v3/content/batchAnnouncement',
      'put /v1/asset/upload',
    ]);
    for (const { operation, required } of multipart)
      expect({ operation, required }).toEqual({
        operation,
        required: expect.arrayContaining(['files']),
      });
    // The operations the reference marks deprecated.
    expect(doc.paths['/v1/asset/upload']?.put?.deprecated).toBe(true);
    expect(doc.paths['/v1/content/{msaId}']?.delete?.deprecated).toBe(true);
    expect(doc.paths['/v2/content/{msaId}/on-chain']?.post?.deprecated).toBe(true);
    // The gone v2 on-chain operation still documents the body it took.
    const onChainV2 = doc.paths['/v2/content/{msaId}/on-chain']?.post?.requestBody?.content?.['application/json'];
    expect(onChainV2?.schema).toEqual({ $ref: '#/components/schemas/OnChainContentDto' });
  });

  it('answers 410 on the gone v2 on-chain operation whatever the body', async () => {
    for (const body of [{ schemaId: 1, payload: '0x01', published: '2024-05-01' }, { junk: true }, undefined]) {
      const answer = await callJson(stack.url, 'POST', '/v2/content/2/on-chain', body);
      expect(answer.status).toBe(410);
    }
  });

  it('GET /dev/request/{jobId} shows a job of any queue; 404 for an unknown one', async () => {
    const { body } = await broadcast('dev lookup');
    await stack.drained();
    const job = await callJson(stack.url, 'GET', `/dev/request/${body.referenceId}`);
    expect(job.status).toBe(200);
    expect(job.body).toMatchObject({
      queue: 'requestQueue',
      state: 'waiting',
      id: body.referenceId,
      name: 'content',
      data: { kind: 'broadcast', msaId: '2' },
    });
    expect((await callJson(stack.url, 'GET', '/dev/request/nope')).status).toBe(404);
  });

  it('GET /dev/request/{jobId} shows a job still waiting for a worker, in state intake', async () => {
    const alone = await startApiStack({}, {}, { relay: false });
    try {
      const posted = await callJson(alone.url, 'POST', '/v1/content/2/broadcast', {
        content: { content: 'no worker yet', published: '2024-05-01' },
      });
      expect(posted.status).toBe(202);
      const job = await callJson(alone.url, 'GET', `/dev/request/${posted.body.referenceId}`);
      expect(job.status).toBe(200);
      expect(job.body).toMatchObject({
        queue: 'requestQueue',
        state: 'intake',
        id: posted.body.referenceId,
        name: 'content',
        data: { kind: 'broadcast', msaId: '2' },
      });
      expect((await callJson(alone.url, 'GET', '/dev/request/nope')).status).toBe(404);
    } finally {
      await alone.close();
    }
  });

  it('POST /dev/dummy/announcement/{queueType}/{count} queues valid requests; 400 for an unknown type', async () => {
    for (const kind of ['broadcast', 'reply', 'reaction', 'update', 'profile', 'tombstone']) {
      const answer = await callJson(stack.url, 'POST', `/dev/dummy/announcement/${kind}/2`);
      expect(answer.status).toBe(201);
      expect(answer.body.referenceIds).toHaveLength(2);
      await stack.drained();
      const job = await callJson(stack.url, 'GET', `/dev/request/${answer.body.referenceIds[0]}`);
      expect(job.body.data.kind).toBe(kind);
    }
    const unknown = await callJson(stack.url, 'POST', '/dev/dummy/announcement/poll/1');
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toEqual([expect.stringMatching(/^params\.queueType: /)]);
    expect((await callJson(stack.url, 'POST', '/dev/dummy/announcement/broadcast/0')).status).toBe(400);
  });

  it('has no /dev routes outside ENVIRONMENT=dev', async () => {
    const production = (await startComponent(contentPublishingApi, {
      env: {
        REDIS_URL: stack.redisServer.url,
        FREQUENCY_API_WS_URL: stack.devchain.url,
        PROVIDER_ID: '1',
        IPFS_EMBEDDED_DIR: stack.storeDir,
        CACHE_KEY_PREFIX: TEST_PREFIX,
        ENVIRONMENT: 'production',
      },
      port: 0,
      logDestination: new PassThrough().resume(),
    })) as StartedComponent<unknown>;
    try {
      expect((await callJson(production.url, 'GET', '/dev/request/x')).status).toBe(404);
      expect((await callJson(production.url, 'POST', '/dev/dummy/announcement/broadcast/1')).status).toBe(404);
      const doc = (await callJson(production.url, 'GET', '/docs/swagger.json')).body as { paths: object };
      expect(Object.keys(doc.paths).filter((path) => path.startsWith('/dev'))).toEqual([]);
    } finally {
      await production.stop();
    }
  });

  it('is not ready while the chain is away, answers 503 where it needs it, and recovers by itself', async () => {
    await waitUntil(async () => (await ready()) === 200, 15_000, '/readyz to answer 200');
    const port = stack.devchain.port;
    await stack.devchain.close();
    await waitUntil(async () => (await ready()) === 503, 15_000, '/readyz to answer 503');
    const health = (await callJson(stack.url, 'GET', '/healthz')).body as {
      checks: Record<string, { status: string }>;
    };
    expect(health.checks.chain?.status).toBe('down');
    const needsChain = await callJson(stack.url, 'POST', '/v3/content/on-chain', {
      schemaId: 9999,
      payload: '0x01',
      published: '2024-05-01',
    });
    expect(needsChain.status).toBe(503);
    // Requests that need no chain read are still accepted.
    expect((await broadcast('while the chain is away')).status).toBe(202);
    stack.devchain = await startDevchain({ port });
    await waitUntil(async () => (await ready()) === 200, 30_000, '/readyz to answer 200 again');
  }, 90_000);

  it('answers 503 and keeps nothing while Redis is away, then recovers by itself', async () => {
    await stack.redisServer.kill('SIGKILL');
    await waitUntil(async () => (await ready()) === 503, 15_000, '/readyz to answer 503');
    const refused = await broadcast('while Redis is away');
    expect(refused.status).toBe(503);
    expect(refused.body.message).toMatch(/could not be queued/);
    const upload = await fetch(`${stack.url}/v2/asset/upload`, {
      method: 'POST',
      body: form([{ name: 'a.png', type: 'image/png', bytes: png(1_000, 40) }]),
    });
    expect(upload.status).toBe(503);
    expect(((await upload.json()) as { message: string }).message).toMatch(/^body\.files: the files could not be kept/);
    await stack.redisServer.restart();
    await waitUntil(async () => (await ready()) === 200, 30_000, '/readyz to answer 200 again');
    // The api's other Redis connections (status records, queue producer) reconnect on their own backoff, which
    // on a loaded machine can trail the readiness connection by a moment.
    await waitUntil(
      async () => (await broadcast('after Redis is back')).status === 202,
      5_000,
      'a broadcast to be accepted again',
    );
    expect(await stack.redis.exists(`{cp}:asset:${await contentId(png(1_000, 40))}`)).toBe(0);
  }, 90_000);
});
