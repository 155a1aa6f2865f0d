import { startRedisServer, type LocalRedis } from '@frequency-gateway/devstack';
import { parseConfig, type ConfigError } from '../src/index.js';
import { startTestComponent, testComponent, testConfig } from './support/testComponent.js';

const BACKEND = 'b4ck3nd-t0ken-0123456789abcdef';
const OPS = 'ops-t0ken-fedcba9876543210xyz';
const API_TOKENS = `backend:${BACKEND}, ops:${OPS}`;

type Document = {
  components?: { securitySchemes?: Record<string, unknown> };
  paths: Record<string, Record<string, { security?: unknown; responses: Record<string, unknown> }>>;
};

describe('API_TOKENS', () => {
  let redis: LocalRedis;
  beforeAll(async () => (redis = await startRedisServer()));
  afterAll(async () => redis.stop());

  const widget = (url: string, headers: Record<string, string> = {}, body = '{"name":"gear","size":1}') =>
    fetch(`${url}/v1/widgets/top`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });

  it('asks every write for a valid bearer token, leaves look-ups, health, metrics and docs open, and documents it', async () => {
    const component = await startTestComponent(testComponent, { REDIS_URL: redis.url, API_TOKENS });
    try {
      const { url, logs } = component;
      const missing = await widget(url);
      expect(missing.status).toBe(401);
      expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="api"');
      expect(await missing.json()).toMatchObject({
        statusCode: 401,
        error: 'Unauthorized',
        message: expect.stringContaining('Authorization: Bearer <token>'),
      });
      const wrong = await widget(url, { authorization: `Bearer ${BACKEND}x` });
      expect(wrong.status).toBe(401);
      expect(wrong.headers.get('www-authenticate')).toBe('Bearer realm="api", error="invalid_token"');
      expect((await widget(url, { authorization: `Basic ${btoa(`backend:${BACKEND}`)}` })).status).toBe(401);
      // Refused before its input is read: no token, no validation report.
      expect((await widget(url, {}, '{"name":1}')).status).toBe(401);

      const accepted = await widget(url, { authorization: `Bearer ${BACKEND}` });
      expect(accepted.status).toBe(202);
      expect((await widget(url, { authorization: `bearer ${OPS}` })).status).toBe(202);

      for (const path of ['/v1/shelves/top', '/livez', '/readyz', '/healthz', '/metrics', '/docs/swagger.json']) {
        await component.runtime.readiness.checkNow('redis');
        expect([path, (await fetch(`${url}${path}`)).status]).toEqual([path, 200]);
      }

      // The access line names the client by its token's name, and no line holds a token.
      const named = logs.map((line) => JSON.parse(line) as Record<string, unknown>).filter((l) => l.status === 202);
      expect(named.map((line) => line.client)).toEqual(['backend', 'ops']);
      expect(logs.join('\n')).not.toContain(BACKEND.slice(0, 12));
      expect(logs.join('\n')).not.toContain(OPS.slice(0, 12));

      const document = (await (await fetch(`${url}/docs/swagger.json`)).json()) as Document;
      expect(Object.keys(document.components?.securitySchemes ?? {})).toEqual(['bearer']);
      const post = document.paths['/v1/widgets/{shelf}']?.post;
      expect(post?.security).toEqual([{ bearer: [] }]);
      expect(Object.keys(post?.responses ?? {})).toContain('401');
      const get = document.paths['/v1/shelves/{shelf}']?.get;
      expect(get?.security).toBeUndefined();
      expect(Object.keys(get?.responses ?? {})).not.toContain('401');
    } finally {
      await component.stop();
    }
  });

  it('with API_TOKENS_FOR_READS asks look-ups for one too, never health or metrics', async () => {
    const component = await startTestComponent(testComponent, {
      REDIS_URL: redis.url,
      API_TOKENS,
      API_TOKENS_FOR_READS: 'true',
    });
    try {
      const { url } = component;
      expect((await fetch(`${url}/v1/shelves/top`)).status).toBe(401);
      const authorized = await fetch(`${url}/v1/shelves/top`, { headers: { authorization: `Bearer ${OPS}` } });
      expect(authorized.status).toBe(200);
      for (const path of ['/livez', '/healthz', '/metrics', '/docs/swagger.json'])
        expect([path, (await fetch(`${url}${path}`)).status]).toEqual([path, 200]);
      const document = (await (await fetch(`${url}/docs/swagger.json`)).json()) as Document;
      expect(document.paths['/v1/shelves/{shelf}']?.get?.security).toEqual([{ bearer: [] }]);
      expect(document.paths['/healthz']?.get?.security).toBeUndefined();
    } finally {
      await component.stop();
    }
  });

  it('is parsed strictly: every bad entry named by position, no token quoted', () => {
    const problems = (value: string) => {
      try {
        parseConfig(testConfig, { REDIS_URL: 'redis://127.0.0.1:1', API_TOKENS: value });
        return [];
      } catch (error) {
        return (error as ConfigError).problems;
      }
    };
    expect(problems('backend:short')).toEqual([
      expect.stringMatching(/^API_TOKENS: entry 1 \(backend\): the token must be 16 or more/),
    ]);
    expect(problems(`${BACKEND}`)).toEqual([expect.stringMatching(/^API_TOKENS: entry 1: must be name:token/)]);
    expect(problems(`a:${BACKEND},a:${OPS}`)).toEqual(['API_TOKENS: a: the name is given twice']);
    expect(problems(`a:${BACKEND},b:${BACKEND}`)).toEqual(['API_TOKENS: two entries have the same token']);
    expect(problems(`a:${BACKEND},b:${OPS}`)).toEqual([]);
    for (const problem of problems(`ok:${BACKEND},bad name:${OPS}`)) {
      expect(problem).not.toContain(BACKEND);
      expect(problem).not.toContain(OPS);
    }
  });
});
