import { type LocalRedis, startRedisServer, waitUntil } from '@frequency-gateway/devstack';
import { parseConfig } from '../src/index.js';
import { startTestComponent, testComponent, testConfig } from './support/testComponent.js';

/** Every `src="…"` and `href="…"` of a page that names a file of the page's own (not another site's). */
function assetsOf(html: string): string[] {
  return [...html.matchAll(/(?:src|href)="([^"]+)"/g)]
    .map((match) => match[1]!)
    .filter((reference) => !/^[a-z]+:/i.test(reference) && /\.(js|css|png|svg)$/.test(reference));
}

describe('HTTP_BASE_PATH', () => {
  let redis: LocalRedis;
  let component: Awaited<ReturnType<typeof startTestComponent>>;

  beforeAll(async () => {
    redis = await startRedisServer();
    component = await startTestComponent(testComponent, {
      REDIS_URL: redis.url,
      HTTP_BASE_PATH: '/account',
      // The queue board is open without credentials only in dev.
      ENVIRONMENT: 'dev',
    });
    // Ready once its checks pass: on a loaded machine the first Redis check may still time out.
    await waitUntil(async () => component.runtime.readiness.isReady(), 15_000);
  });
  afterAll(async () => {
    await component.stop();
    await redis.stop();
  });

  const get = (path: string, init?: RequestInit) => fetch(`${component.url}${path}`, init);

  it('serves every route under the prefix and without it', async () => {
    expect((await get('/account/livez')).status).toBe(200);
    expect((await get('/livez')).status).toBe(200);
    expect((await get('/account/readyz')).status).toBe(200);
    const queued = await get('/account/v1/widgets/top?dryRun=true', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'sprocket', size: 1 }),
    });
    expect(queued.status).toBe(202);
    // Only a whole path segment is the prefix.
    expect((await get('/accountx/livez')).status).toBe(404);
    expect((await get('/account/account/livez')).status).toBe(404);
    // Metrics know the route, not the way it was reached.
    const metrics = await (await get('/metrics')).text();
    expect(metrics).toMatch(
      /http_request_duration_seconds_count\{[^}]*route="\/v1\/widgets\/\{shelf\}"[^}]*status="202"/,
    );
  });

  it('serves Swagger UI through the prefix, its assets and its document included', async () => {
    const page = await get('/account/docs/swagger');
    expect(page.status).toBe(200);
    // The page links its assets relatively: reached without a trailing slash it is redirected, under the prefix.
    expect(new URL(page.url).pathname).toBe('/account/docs/swagger/');
    const assets = assetsOf(await page.text());
    expect(assets).toEqual(
      expect.arrayContaining(['./swagger-ui-bundle.js', './swagger-ui-init.js', './swagger-ui.css']),
    );
    for (const asset of assets) {
      const response = await fetch(new URL(asset, page.url));
      expect([asset, response.status]).toEqual([asset, 200]);
    }
    // The document names the prefix as its server, so that "Try it out" goes through the Ingress too.
    const init = await (await fetch(new URL('./swagger-ui-init.js', page.url))).text();
    expect(init).toMatch(/"servers": \[\s*\{\s*"url": "\/account"\s*\}\s*\]/);
    const document = (await (await get('/account/docs/swagger.json')).json()) as { servers?: unknown };
    expect(document.servers).toEqual([{ url: '/account' }]);

    // Reached without the prefix, the same UI and document know nothing of it.
    const plainInit = await (await get('/docs/swagger/swagger-ui-init.js')).text();
    expect(plainInit).toContain('"openapi": "3.1.0"');
    expect(plainInit).not.toContain('"servers"');
    expect(((await (await get('/docs/swagger.json')).json()) as { servers?: unknown }).servers).toBeUndefined();
  });

  it('serves the queue board through the prefix with assets and API under it', async () => {
    const page = await get('/account/queues');
    expect(page.status).toBe(200);
    const html = await page.text();
    const base = /<base href="([^"]+)"/.exec(html)?.[1];
    expect(base).toBe('/account/queues/');
    const root = new URL(base!, page.url);
    const assets = assetsOf(html);
    expect(assets.some((asset) => asset.startsWith('static/js/main.'))).toBe(true);
    for (const asset of assets) {
      const url = new URL(asset, root);
      expect(url.pathname.startsWith('/account/queues/')).toBe(true);
      const response = await fetch(url);
      expect([asset, response.status]).toEqual([asset, 200]);
    }
    // The board calls its API relative to the base.
    const api = (await (await fetch(new URL('api/queues', root))).json()) as { queues: { name: string }[] };
    expect(api.queues.map((queue) => queue.name)).toContain('widgets');

    const plain = await (await get('/queues')).text();
    expect(/<base href="([^"]+)"/.exec(plain)?.[1]).toBe('/queues/');
  });

  it('accepts only a path: leading slash, no trailing slash, URL path characters', () => {
    const problem = (value: string) => {
      try {
        parseConfig(testConfig, { REDIS_URL: 'redis://127.0.0.1:1', HTTP_BASE_PATH: value });
        return undefined;
      } catch (error) {
        return (error as { problems: string[] }).problems.join('; ');
      }
    };
    for (const good of ['/account', '/gateway/account', '/a-b_c.d~e', '/caf%C3%A9'])
      expect(problem(good)).toBeUndefined();
    for (const bad of [
      'account',
      '/account/',
      '/',
      '//account',
      '/a b',
      '/a?b',
      '/a#b',
      '/../account',
      '/a/./b',
      '/100%',
    ]) {
      expect([bad, problem(bad)]).toEqual([bad, expect.stringMatching(/^HTTP_BASE_PATH: must be a path/)]);
    }
  });
});
