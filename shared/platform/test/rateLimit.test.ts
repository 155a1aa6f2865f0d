import { type LocalRedis, startRedisServer, waitUntil } from '@frequency-gateway/devstack';
import { startTestComponent, testComponent } from './support/testComponent.js';

const TOKEN = 'r4te-l1mit-t0ken-0123456789';

type Envelope = { statusCode: number; message: string; errorReference: string };

describe('RATE_LIMIT_PER_MINUTE', () => {
  let redis: LocalRedis;
  beforeAll(async () => (redis = await startRedisServer()));
  afterAll(async () => redis.stop());

  /** Two replicas of one api on one Redis, as a Deployment runs them; each scenario counts under its own prefix. */
  const replicas = async (prefix: string, env: NodeJS.ProcessEnv = {}) => {
    const settings = { REDIS_URL: redis.url, CACHE_KEY_PREFIX: prefix, RATE_LIMIT_PER_MINUTE: '4', ...env };
    const started = [
      await startTestComponent(testComponent, settings),
      await startTestComponent(testComponent, settings),
    ];
    for (const one of started) await waitUntil(async () => one.runtime.readiness.isReady(), 10_000);
    return started;
  };

  it('counts a client across replicas and answers 429 with Retry-After over the limit; health and metrics are not counted', async () => {
    const [a, b] = await replicas('shared');
    try {
      const look = (url: string) => fetch(`${url}/v1/shelves/top`);
      const statuses = [];
      for (const url of [a!.url, b!.url, a!.url, b!.url]) statuses.push((await look(url)).status);
      expect(statuses).toEqual([200, 200, 200, 200]);

      const refused = await look(b!.url);
      expect(refused.status).toBe(429);
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect((await refused.json()) as Envelope).toMatchObject({
        statusCode: 429,
        error: 'Too Many Requests',
        message: expect.stringMatching(/at most 4 requests a minute per client; retry after \d+ s/),
      });
      // Writes, unknown paths and the docs count too; the other replica refuses as well.
      expect((await fetch(`${a!.url}/docs/swagger.json`)).status).toBe(429);
      expect((await fetch(`${a!.url}/v1/nothing`)).status).toBe(429);

      for (const path of ['/livez', '/readyz', '/healthz', '/metrics'])
        expect([path, (await fetch(`${a!.url}${path}`)).status]).toEqual([path, 200]);
      expect(await (await fetch(`${b!.url}/metrics`)).text()).toMatch(/^http_rate_limited_total\{[^}]*\} [1-9]/m);

      // One line says the client went over, not one per refused request.
      const over = [...a!.logs, ...b!.logs].filter((line) => line.includes('client over its rate limit'));
      expect(over).toHaveLength(1);
      expect(JSON.parse(over[0] as string)).toMatchObject({
        client: expect.stringMatching(/^address:(::ffff:)?127\.0\.0\.1$/),
        limitPerMinute: 4,
      });
    } finally {
      await a!.stop();
      await b!.stop();
    }
  });

  it('counts a client by its token name when it sends one, and believes X-Forwarded-For only from trusted proxies', async () => {
    const [direct, behindProxy] = await replicas('clients', { API_TOKENS: `backend:${TOKEN}` });
    const trusting = await startTestComponent(testComponent, {
      REDIS_URL: redis.url,
      CACHE_KEY_PREFIX: 'clients',
      RATE_LIMIT_PER_MINUTE: '4',
      HTTP_TRUST_PROXY: 'loopback',
    });
    try {
      const slow = (url: string, headers: Record<string, string> = {}) =>
        fetch(`${url}/v1/slow?ms=0`, { headers }).then((response) => response.status);
      for (let i = 0; i < 4; i++) expect(await slow(direct!.url)).toBe(200);
      expect(await slow(direct!.url)).toBe(429);
      // The token's budget is its own.
      const withToken = { authorization: `Bearer ${TOKEN}` };
      for (let i = 0; i < 4; i++) expect(await slow(behindProxy!.url, withToken)).toBe(200);
      expect(await slow(behindProxy!.url, withToken)).toBe(429);
      // A client cannot pick an address of its own when no proxy is trusted.
      expect(await slow(direct!.url, { 'x-forwarded-for': '198.51.100.7' })).toBe(429);
      // Behind a trusted proxy (loopback here), each forwarded address counts on its own.
      expect(await slow(trusting.url, { 'x-forwarded-for': '198.51.100.7' })).toBe(200);
      expect(await slow(trusting.url, { 'x-forwarded-for': '198.51.100.8' })).toBe(200);
    } finally {
      await direct!.stop();
      await behindProxy!.stop();
      await trusting.stop();
    }
  });

  it('lets requests through uncounted while Redis does not answer, says so once, and counts again when it is back', async () => {
    const own = await startRedisServer();
    const component = await startTestComponent(testComponent, { REDIS_URL: own.url, RATE_LIMIT_PER_MINUTE: '2' });
    try {
      await waitUntil(async () => component.runtime.readiness.isReady(), 10_000);
      await own.kill('SIGKILL');
      // A route that needs no Redis keeps answering, beyond the limit.
      for (let i = 0; i < 5; i++) {
        const started = Date.now();
        expect((await fetch(`${component.url}/v1/slow?ms=0`)).status).toBe(200);
        expect(Date.now() - started).toBeLessThan(1000);
      }
      const suspended = component.logs.filter((line) => line.includes('rate limit not applied'));
      expect(suspended).toHaveLength(1);
      expect(await (await fetch(`${component.url}/metrics`)).text()).toMatch(
        /^http_rate_limit_unchecked_total\{[^}]*\} 5/m,
      );

      await own.restart();
      await waitUntil(async () => component.runtime.readiness.isReady(), 10_000);
      const statuses = await waitUntil(async () => {
        const answers = [];
        for (let i = 0; i < 3; i++) answers.push((await fetch(`${component.url}/v1/slow?ms=0`)).status);
        return answers.includes(429) && answers;
      }, 10_000);
      expect(statuses).toContain(429);
      expect(component.logs.filter((line) => line.includes('rate limit applied again'))).toHaveLength(1);
    } finally {
      await component.stop();
      await own.stop();
    }
  });
});
