import { type LocalRedis, startRedisServer, waitUntil } from '@frequency-gateway/devstack';
import { openRedis } from '../src/index.js';
import { startTestComponent, testComponent } from './support/testComponent.js';

// Every character that means something in a URL, a percent sign that would read as an escape, and a space.
const PASSWORD = 'p@ss:w/rd %41x?#&=';

describe('REDIS_PASSWORD', () => {
  let redis: LocalRedis;
  beforeAll(async () => (redis = await startRedisServer({ password: PASSWORD })));
  afterAll(async () => redis.stop());

  const secretForms = [PASSWORD, encodeURIComponent(PASSWORD), 'p@ss:w', 'w/rd %41x'];

  it('connects with a REDIS_URL that has no password, and the password shows nowhere', async () => {
    const component = await startTestComponent(testComponent, {
      REDIS_URL: `redis://127.0.0.1:${redis.port}`,
      REDIS_PASSWORD: PASSWORD,
    });
    try {
      await waitUntil(async () => (await fetch(`${component.url}/readyz`)).status === 200, 5000);
      // The queues (BullMQ's own connections) use it too.
      const queued = await fetch(`${component.url}/v1/widgets/top`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'sprocket', size: 2 }),
      });
      expect(queued.status).toBe(202);
      // So does a connection a service opens itself from the configuration, as the api components do.
      const own = openRedis(component.runtime.config.REDIS_URL, 'failFast');
      await waitUntil(async () => (await own.ping()) === 'PONG', 5000);
      own.disconnect();

      // A line that quotes the URL (an error message, say) is scrubbed.
      component.runtime.logger.warn(`cannot reach ${component.runtime.config.REDIS_URL}`);
      // Up as the check last saw it (a check that met a busy moment says down until its next turn).
      let health = '';
      await waitUntil(async () => {
        health = await (await fetch(`${component.url}/healthz`)).text();
        return (JSON.parse(health) as { status: string }).status === 'ok';
      }, 20_000);
      expect(JSON.parse(health)).toMatchObject({
        status: 'ok',
        checks: { redis: { status: 'up', target: `redis://127.0.0.1:${redis.port}` } },
      });
      expect(component.logs.some((line) => line.includes('cannot reach') && line.includes('[redacted]'))).toBe(true);
      const everything = [health, await (await fetch(`${component.url}/readyz`)).text(), ...component.logs].join('\n');
      for (const form of secretForms) expect(everything).not.toContain(form);
    } finally {
      await component.stop();
    }
  });

  it('overrides a wrong password in REDIS_URL', async () => {
    const component = await startTestComponent(testComponent, {
      REDIS_URL: `redis://:not-the-password@127.0.0.1:${redis.port}/0`,
      REDIS_PASSWORD: PASSWORD,
    });
    try {
      await waitUntil(async () => (await fetch(`${component.url}/readyz`)).status === 200, 5000);
    } finally {
      await component.stop();
    }
  });

  it('is needed: without it the same REDIS_URL is refused and /readyz says so', async () => {
    const component = await startTestComponent(testComponent, { REDIS_URL: `redis://127.0.0.1:${redis.port}` });
    try {
      const state = await component.runtime.readiness.checkNow('redis');
      expect(state.status).toBe('down');
      expect((await fetch(`${component.url}/readyz`)).status).toBe(503);
    } finally {
      await component.stop();
    }
  });
});
