import { type LocalRedis, startRedisServer, waitUntil } from '@frequency-gateway/devstack';
import { Redis } from 'ioredis';
import { createLogger, openRedis, RedisAvailability } from '../src/index.js';
import { captureLogLines } from './support/logLines.js';
import { startTestComponent, testComponent } from './support/testComponent.js';

const RIGHT = 'the-right-password';
const WRONG = 'not-the-password';

type Envelope = { statusCode: number; message: string; errorReference: string };

describe('Redis refusing the credentials', () => {
  let redis: LocalRedis;
  let admin: Redis;
  beforeAll(async () => {
    redis = await startRedisServer({ password: RIGHT });
    admin = new Redis(redis.url);
  });
  afterAll(async () => {
    admin.disconnect();
    await redis.stop();
  });

  it('answers 503 saying so at once, on every route that needs Redis, logs it a handful of times, and recovers', async () => {
    const component = await startTestComponent(testComponent, {
      REDIS_URL: `redis://:${WRONG}@127.0.0.1:${redis.port}`,
      ENVIRONMENT: 'dev',
    });
    const { url, logs } = component;
    try {
      const readiness = await waitUntil(async () => {
        const response = await fetch(`${url}/readyz`);
        const body = (await response.json()) as { checks: { redis: { status: string; error?: string } } };
        return response.status === 503 && body.checks.redis.error?.includes('WRONGPASS') ? body : undefined;
      }, 10_000);
      expect(readiness.checks.redis.error).toMatch(/^Redis refused the credentials: WRONGPASS/);

      // A write through a BullMQ queue, a look-up on the component's own connection, the queue board's API.
      const attempts: [string, RequestInit, string][] = [
        [
          '/v1/widgets/top',
          { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"gear","size":1}' },
          'POST /v1/widgets/{shelf}',
        ],
        ['/v1/shelves/top', {}, 'GET /v1/shelves/{shelf}'],
        ['/queues/api/queues', {}, 'GET /queues'],
      ];
      for (const [path, init, route] of attempts) {
        const started = Date.now();
        const response = await fetch(`${url}${path}`, { ...init, signal: AbortSignal.timeout(10_000) });
        const elapsed = Date.now() - started;
        const body = (await response.json()) as Envelope;
        expect([path, response.status, body.message]).toEqual([path, 503, 'Redis refused the credentials']);
        // At once: a request left waiting on Redis would hang until its 10 s abort (a loaded machine takes seconds too).
        expect(elapsed).toBeLessThan(5000);
        expect(JSON.stringify(body)).not.toContain(WRONG);
        // The reference leads to one line with the cause and the route.
        const lines = await waitUntil(async () => {
          const found = logs.filter((line) => line.includes(body.errorReference));
          return found.length > 0 && found;
        }, 5000);
        expect(lines).toHaveLength(1);
        const line = JSON.parse(lines[0] as string) as {
          level: string;
          method: string;
          route: string;
          err: { message: string };
        };
        expect([line.level, `${line.method} ${line.route}`]).toEqual(['error', route]);
        expect(line.err.message).toMatch(/^Redis refused the credentials \(WRONGPASS/);
      }

      // Watched over many refused attempts (counted by the server): every queue and connection retries every few
      // seconds, and none of it becomes a line each.
      const connectionLines = () =>
        logs.filter((line) => line.includes('WRONGPASS') && !line.includes('"errorReference"'));
      const refusals = async () =>
        Number(/errorstat_WRONGPASS:count=(\d+)/.exec(await admin.info('errorstats'))?.[1] ?? 0);
      const refusedBefore = await refusals();
      await waitUntil(
        async () => (await refusals()) - refusedBefore >= 20,
        60_000,
        'twenty more refused connection attempts',
      );
      expect(connectionLines().length).toBeLessThanOrEqual(3);
      expect(connectionLines().length).toBeGreaterThanOrEqual(1);
      expect(logs.join('\n')).not.toContain(WRONG);

      // The password the component has becomes the right one: it recovers without a restart.
      await admin.config('SET', 'requirepass', WRONG);
      await waitUntil(async () => (await fetch(`${url}/readyz`)).status === 200, 15_000);
      // Each connection takes the password at its next attempt, within a few seconds.
      const answers = async () => {
        const queued = await fetch(`${url}/v1/widgets/top`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"name":"gear","size":1}',
        });
        const lookup = await fetch(`${url}/v1/shelves/top`);
        const board = await fetch(`${url}/queues/api/queues`);
        return [queued.status, lookup.status, board.status];
      };
      await waitUntil(async () => (await answers()).join() === '202,200,200', 10_000);
    } finally {
      await admin.config('SET', 'requirepass', RIGHT).catch(() => undefined);
      await component.stop();
    }
  }, 90_000);

  it('reminds of a refusal that lasts once per period, with the number of refused attempts', async () => {
    const { stream, lines } = captureLogLines();
    const logger = createLogger({ component: 't', level: 'info', pretty: false, destination: stream });
    const availability = new RedisAvailability({ logger, reminderMs: 1500 });
    const connection = availability.watch(openRedis(`redis://:${WRONG}@127.0.0.1:${redis.port}`, 'failFast'));
    try {
      const reminder = await waitUntil(async () => lines.find((line) => line.failedAttempts !== undefined), 10_000);
      expect(reminder).toMatchObject({
        level: 'warn',
        redis: 'credentials',
        cause: expect.stringMatching(/^WRONGPASS/),
        msg: expect.stringMatching(/^Redis refused the credentials still: \d+ failed connection attempts since /),
      });
      expect(reminder.failedAttempts).toBeGreaterThan(0);
      expect(availability.failureOf(connection)?.kind).toBe('credentials');
      await expect(connection.ping()).rejects.toThrow();
      expect(availability.explain(new Error("Stream isn't writeable and enableOfflineQueue options is false"))).toEqual(
        availability.failureOf(connection),
      );
    } finally {
      connection.disconnect();
    }
  });
});
