import { Redis } from 'ioredis';
import { type LocalRedis, startRedisServer, waitUntil } from '@frequency-gateway/devstack';
import { startTestComponent, testComponent } from './support/testComponent.js';

describe('HTTP surface of a component', () => {
  let redis: LocalRedis;
  let component: Awaited<ReturnType<typeof startTestComponent>>;

  beforeAll(async () => {
    redis = await startRedisServer({ password: 's3cret-pass' });
    component = await startTestComponent(testComponent, {
      REDIS_URL: redis.url,
      QUEUES_BASIC_AUTH: 'admin:board-pass',
    });
    await component.runtime.readiness.checkNow('redis');
  });
  afterAll(async () => {
    await component.stop();
    await redis.stop();
  });

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${component.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('validates params, query and body together and lists every problem', async () => {
    const response = await post('/v1/widgets/BAD?dryRun=perhaps', { name: 'x', size: 'big', extra: { deep: null } });
    expect(response.status).toBe(400);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    expect(body.errorReference).toMatch(/^[A-Za-z0-9]{20}$/);
    const messages = body.message as string[];
    expect(messages).toHaveLength(4);
    expect(messages.map((m) => m.split(':')[0]).sort()).toEqual([
      'body.name',
      'body.size',
      'params.shelf',
      'query.dryRun',
    ]);
    expect(messages).toContain('body.size: Invalid input: expected number, received string');

    const empty = await post('/v1/widgets/top', {});
    expect(((await empty.json()) as { message: string[] }).message).toEqual([
      'body.name: is required',
      'body.size: is required',
    ]);
  });

  it('accepts a valid request and enqueues a job', async () => {
    const response = await post('/v1/widgets/top', { name: 'sprocket', size: 3 });
    expect(response.status).toBe(202);
    const { jobId } = (await response.json()) as { jobId: string };
    const job = await component.runtime.queues.queue('widgets').getJob(jobId);
    expect(job?.data).toEqual({ shelf: 'top', name: 'sprocket', size: 3 });
  });

  it('rejects malformed and oversized JSON with the error envelope', async () => {
    const malformed = await post('/v1/widgets/top', '{"name":');
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ statusCode: 400, message: 'body: is not valid JSON' });
    const huge = await post('/v1/widgets/top', { name: 'x'.repeat(2 * 1024 * 1024), size: 1 });
    expect(huge.status).toBe(413);
    expect(await huge.json()).toMatchObject({ statusCode: 413, error: 'Payload Too Large' });
  });

  it('answers unknown routes with 404 and failures with a logged reference', async () => {
    const missing = await fetch(`${component.url}/v1/nothing`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({
      statusCode: 404,
      error: 'Not Found',
      message: 'Cannot GET /v1/nothing',
    });

    const broken = await fetch(`${component.url}/v1/broken`);
    expect(broken.status).toBe(500);
    const body = (await broken.json()) as { message: string; errorReference: string };
    expect(body.message).toBe('Internal server error');
    expect(JSON.stringify(body)).not.toContain('database exploded');
    // One line holds the reference, the cause and the route: the one an operator finds by the reference.
    const logged = await waitUntil(async () => {
      const lines = component.logs.filter((line) => line.includes(body.errorReference));
      return lines.length > 0 && lines;
    }, 5000);
    expect(logged).toHaveLength(1);
    expect(JSON.parse(logged[0] as string)).toMatchObject({
      level: 'error',
      errorReference: body.errorReference,
      method: 'GET',
      route: '/v1/broken',
      status: 500,
      err: { message: 'database exploded' },
    });
  });

  it('echoes a sane request id and replaces an unsafe one', async () => {
    const kept = await fetch(`${component.url}/livez`, { headers: { 'x-request-id': 'abc-123' } });
    expect(kept.headers.get('x-request-id')).toBe('abc-123');
    const replaced = await fetch(`${component.url}/livez`, { headers: { 'x-request-id': 'bad id\twith spaces' } });
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('names the request id in the access line and in what the request logs', async () => {
    await fetch(`${component.url}/v1/broken`, { headers: { 'x-request-id': 'trace-42' } });
    const lines = await waitUntil(async () => {
      const found = component.logs.filter((line) => line.includes('"requestId":"trace-42"'));
      return found.length > 0 && found;
    }, 5000);
    expect(lines.some((line) => line.includes('request failed') && line.includes('"route":"/v1/broken"'))).toBe(true);
  });

  it("answers headers over Node's limit (a long query string counts) with 431 and the error envelope", async () => {
    const longQuery = await fetch(`${component.url}/v1/slow?ms=1&pad=${'x'.repeat(20_000)}`);
    expect(longQuery.status).toBe(431);
    expect(await longQuery.json()).toMatchObject({
      statusCode: 431,
      error: 'Request Header Fields Too Large',
      message: expect.stringMatching(/exceed 16 KiB/),
      errorReference: expect.stringMatching(/^[A-Za-z0-9]{20}$/),
    });
    const longHeader = await fetch(`${component.url}/livez`, { headers: { 'x-padding': 'y'.repeat(20_000) } });
    expect(longHeader.status).toBe(431);
    expect(longHeader.headers.get('content-type')).toContain('application/json');
    // The server goes on answering.
    expect((await fetch(`${component.url}/livez`)).status).toBe(200);
  });

  it('sets security headers', async () => {
    const response = await fetch(`${component.url}/livez`);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(response.headers.get('x-powered-by')).toBeNull();
  });

  it('exposes request latency by route template, queue depth and process metrics', async () => {
    await post('/v1/widgets/top', { name: 'gear', size: 1 });
    const text = await (await fetch(`${component.url}/metrics`)).text();
    const latency = text
      .split('\n')
      .find(
        (line) =>
          line.startsWith('http_request_duration_seconds_count{') &&
          line.includes('route="/v1/widgets/{shelf}"') &&
          line.includes('status="202"'),
      );
    expect(latency).toContain('method="POST"');
    expect(Number(latency?.split(' ').pop())).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/queue_jobs\{queue="widgets",state="waiting",component="test-api"\} [1-9]/);
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(text).toContain('readiness_check_up{check="redis",component="test-api"} 1');
  });

  it('exports what the alerts read: readiness, the oldest waiting job, and Redis memory against its limit', async () => {
    const admin = new Redis(redis.url);
    try {
      await admin.config('SET', 'maxmemory', String(256 * 1024 * 1024));
      await post('/v1/widgets/top', { name: 'cog', size: 2 });
      // The widgets queue has no worker: its oldest job waits, and its age grows.
      const gauges = async () => {
        const lines = (await (await fetch(`${component.url}/metrics`)).text()).split('\n');
        const value = (prefix: string) =>
          Number(
            lines
              .find((line) => line.startsWith(prefix))
              ?.split(' ')
              .pop(),
          );
        return {
          ready: value('readiness_ready{'),
          oldest: value('queue_oldest_waiting_seconds{queue="widgets",'),
          used: value('redis_memory_used_bytes{'),
          max: value('redis_memory_max_bytes{'),
        };
      };
      const first = await gauges();
      expect(first).toMatchObject({ ready: 1, max: 256 * 1024 * 1024 });
      expect(first.used).toBeGreaterThan(100_000);
      expect(first.used).toBeLessThan(first.max);
      expect(first.oldest).toBeGreaterThanOrEqual(0);
      await waitUntil(async () => (await gauges()).oldest > first.oldest, 5000, 'the oldest waiting job to age');
    } finally {
      admin.disconnect();
    }
  });

  it('never shows a secret in /healthz, /readyz, /metrics or the logs', async () => {
    const health = await (await fetch(`${component.url}/healthz`)).text();
    expect(JSON.parse(health)).toMatchObject({
      status: 'ok',
      component: 'test-api',
      version: '1.2.3',
      checks: { redis: { status: 'up' } },
    });
    expect(health).toContain(`redis://127.0.0.1:${redis.port}`);
    const everything = [
      health,
      await (await fetch(`${component.url}/readyz`)).text(),
      await (await fetch(`${component.url}/metrics`)).text(),
      ...component.logs,
    ].join('\n');
    expect(everything).not.toContain('s3cret');
    expect(everything).not.toContain('board-pass');
  });

  it('serves the OpenAPI document and Swagger UI', async () => {
    const document = (await (await fetch(`${component.url}/docs/swagger.json`)).json()) as {
      openapi: string;
      info: { title: string };
    };
    expect(document.openapi).toBe('3.1.0');
    expect(document.info.title).toBe('Test API');
    const ui = await fetch(`${component.url}/docs/swagger/`);
    expect(ui.status).toBe(200);
    expect(await ui.text()).toContain('swagger-ui');
  });

  it('puts the queue board behind basic auth', async () => {
    const anonymous = await fetch(`${component.url}/queues`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toContain('Basic');
    const wrong = await fetch(`${component.url}/queues`, { headers: { authorization: `Basic ${btoa('admin:nope')}` } });
    expect(wrong.status).toBe(401);
    const authorization = `Basic ${btoa('admin:board-pass')}`;
    const page = await fetch(`${component.url}/queues`, { headers: { authorization } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<div id="root">');
    const api = (await (await fetch(`${component.url}/queues/api/queues`, { headers: { authorization } })).json()) as {
      queues: { name: string }[];
    };
    expect(api.queues.map((q) => q.name)).toContain('widgets');
  });
});

describe('queue board switch', () => {
  let redis: LocalRedis;
  beforeAll(async () => (redis = await startRedisServer()));
  afterAll(async () => redis.stop());

  const withComponent = async (env: NodeJS.ProcessEnv, use: (url: string, logs: string[]) => Promise<void>) => {
    const component = await startTestComponent(testComponent, { REDIS_URL: redis.url, ...env });
    try {
      await use(component.url, component.logs);
    } finally {
      await component.stop();
    }
  };
  const warning = (logs: string[]) => logs.filter((line) => line.includes('the queue board (/queues) is not served'));

  it('is absent when QUEUES_UI=false', async () => {
    await withComponent({ QUEUES_UI: 'false' }, async (url, logs) => {
      expect((await fetch(`${url}/queues`)).status).toBe(404);
      expect(warning(logs)).toEqual([]);
    });
  });

  it('is not served outside dev without credentials, and a warning at start says how to serve it', async () => {
    await withComponent({}, async (url, logs) => {
      expect((await fetch(`${url}/queues`)).status).toBe(404);
      // Its write actions are not there either.
      const pause = await fetch(`${url}/queues/api/queues/pause`, { method: 'PUT' });
      expect(pause.status).toBe(404);
      expect((await fetch(`${url}/queues/api/queues`)).status).toBe(404);
      expect(warning(logs)).toHaveLength(1);
      expect(JSON.parse(warning(logs)[0] as string)).toMatchObject({
        level: 'warn',
        msg: expect.stringContaining('QUEUES_BASIC_AUTH=user:password'),
      });
    });
  });

  it('is open in dev without credentials', async () => {
    await withComponent({ ENVIRONMENT: 'dev' }, async (url, logs) => {
      const api = (await (await fetch(`${url}/queues/api/queues`)).json()) as { queues: { name: string }[] };
      expect(api.queues.map((q) => q.name)).toContain('widgets');
      expect(warning(logs)).toEqual([]);
    });
  });
});
