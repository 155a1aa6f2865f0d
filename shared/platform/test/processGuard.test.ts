import { startRedisServer, freePort, type LocalRedis } from '@frequency-gateway/devstack';
import { runScript } from './support/processes.js';

describe('a component that owns its process', () => {
  let redis: LocalRedis;
  beforeAll(async () => (redis = await startRedisServer()));
  afterAll(async () => redis.stop());

  const start = async (crashWith: string) => {
    const app = runScript('test/fixtures/crashingComponent.ts', {
      REDIS_URL: redis.url,
      API_PORT: String(await freePort()),
      CRASH_WITH: crashWith,
    });
    await app.waitForLine((line) => line.msg === 'test-api listening');
    return app;
  };

  it('logs an unhandled rejection with its cause at fatal and exits 1 on purpose', async () => {
    const app = await start('rejection');
    expect(await app.exited).toEqual({ code: 1, signal: null });
    const fatal = app.lines.filter((line) => line.level === 'fatal');
    expect(fatal).toEqual([
      expect.objectContaining({
        component: 'test-api',
        kind: 'unhandled promise rejection',
        msg: 'unhandled promise rejection: exiting so that the process is restarted',
        reason: { type: 'ErrorEvent', message: 'connect ECONNREFUSED 127.0.0.1:9944' },
      }),
    ]);
  }, 120_000);

  it('logs an uncaught exception with its stack at fatal and exits 1', async () => {
    const app = await start('exception');
    expect(await app.exited).toEqual({ code: 1, signal: null });
    const fatal = app.lines.find((line) => line.level === 'fatal') as { err: { message: string; stack: string } };
    expect(fatal.err.message).toBe('cannot read properties of undefined');
    expect(fatal.err.stack).toContain('crashingComponent.ts');
  }, 120_000);

  it('sends what libraries print on the console through the logger, a repeated line once', async () => {
    const app = await start('rejection');
    await app.exited;
    const printed = app.lines.filter((line) => line.source === 'console');
    expect(printed).toEqual([
      expect.objectContaining({
        level: 'error',
        component: 'test-api',
        msg: 'API-WS: disconnected from ws://127.0.0.1:9: 1006:: Abnormal Closure',
      }),
    ]);
    expect(app.lines.filter((line) => 'text' in line)).toEqual([]);
  }, 120_000);
});
