import { startRedisServer, freePort, waitUntil, type LocalRedis } from '@frequency-gateway/devstack';
import { runScript } from './support/processes.js';

describe('graceful shutdown of a real process', () => {
  let redis: LocalRedis;
  beforeAll(async () => (redis = await startRedisServer()));
  afterAll(async () => redis.stop());

  it('finishes the request in flight, refuses new connections and exits 0 on SIGTERM', async () => {
    const port = await freePort();
    const app = runScript('test/fixtures/slowComponent.ts', {
      REDIS_URL: redis.url,
      API_PORT: String(port),
      LOG_LEVEL: 'info',
    });
    await app.waitForLine((line) => line.msg === 'test-api listening');
    const base = `http://127.0.0.1:${port}`;

    const inFlight = fetch(`${base}/v1/slow?ms=1500`);
    await app.waitForLine((line) => line.msg === 'slow request started');
    app.child.kill('SIGTERM');
    await app.waitForLine((line) => line.msg === 'shutting down: readiness is now false');

    // The listener closes right after readiness turns false; from then on a new connection is refused.
    const refused = await waitUntil(
      () =>
        fetch(`${base}/livez`).then(
          () => undefined,
          (error: { cause?: { code?: string } }) => error.cause?.code === 'ECONNREFUSED' && error.cause.code,
        ),
      5_000,
      'new connections refused',
    );
    expect(refused).toBe('ECONNREFUSED');

    const response = await inFlight;
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ waitedMs: 1500 });
    expect({ exit: await app.exited, lines: app.lines.slice(-8) }).toMatchObject({ exit: { code: 0, signal: null } });
    expect(app.lines.some((line) => line.msg === 'stopped')).toBe(true);
  }, 120_000);
});
