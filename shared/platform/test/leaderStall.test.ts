// A leader whose loop hangs on something that never answers, while the lease itself renews fine: without a stall
// watch, it would keep the lease (and every other replica from the work) for ever. With one, it steps down at once,
// another replica takes over, and the stuck one's /livez fails so that Kubernetes restarts it.
import { startRedisServer, waitUntil, type LocalRedis } from '@frequency-gateway/devstack';
import { Redis } from 'ioredis';
import { createLogger, RedisLeaseLock, runAsLeader, type LeaderLoop } from '../src/index.js';
import { startTestComponent, testComponent } from './support/testComponent.js';

const timing = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 250 };
const STALL_MS = 1_500;

let redis: LocalRedis;
let client: Redis;
beforeAll(async () => {
  redis = await startRedisServer();
  client = new Redis(redis.url);
});
afterAll(async () => {
  client?.disconnect();
  await redis?.stop();
});

/** A loop that reports progress every 100 ms until its signal aborts, counting its reports. */
function steadyLoop(counter: { reports: number }): LeaderLoop {
  return ({ signal, progress }) =>
    new Promise<void>((resolve) => {
      const timer = setInterval(() => (progress(), counter.reports++), 100);
      signal.addEventListener('abort', () => (clearInterval(timer), resolve()), { once: true });
    });
}

test('a leader whose loop stops reporting progress steps down; another replica takes the lease and the work, and the stuck one says so until its loop returns', async () => {
  const logger = createLogger({ level: 'silent', component: 'stall-test', pretty: false });
  const lock = () => new RedisLeaseLock(client, '{stall}', 'scanner');
  let release!: () => void;
  const hanging = new Promise<void>((resolve) => (release = resolve));
  const runs: string[] = [];
  // Reports once, then waits on what never answers, never looking at its signal.
  const first = runAsLeader(
    { name: 'scanner', identity: 'first', lock: lock(), logger, timing, stallAfterMs: STALL_MS },
    async ({ progress }) => {
      runs.push('first');
      progress();
      await hanging;
    },
  );
  await waitUntil(async () => first.isLeader(), 10_000, 'the first replica leading');
  const steady = { reports: 0 };
  const second = runAsLeader(
    { name: 'scanner', identity: 'second', lock: lock(), logger, timing, stallAfterMs: STALL_MS },
    (context) => (runs.push('second'), steadyLoop(steady)(context)),
  );
  try {
    await waitUntil(async () => second.isLeader(), 15_000, 'the second replica taking the lease over');
    expect(first.isLeader()).toBe(false);
    expect(first.stalled()).toBe(true);
    expect(first.status().stalledForMs).toBeGreaterThanOrEqual(STALL_MS);
    expect(runs).toEqual(['first', 'second']);
    // A loop that reports keeps its lease past many stall windows.
    await waitUntil(
      async () => steady.reports >= (3 * STALL_MS) / 100,
      15_000,
      'the second loop reporting for 3 windows',
    );
    expect([second.isLeader(), second.stalled()]).toEqual([true, false]);

    release();
    await waitUntil(async () => !first.stalled(), 5_000, 'the first loop returned and its replica no longer stalled');
    expect(first.status().stalledForMs).toBeUndefined();
  } finally {
    release();
    await second.stop();
    await first.stop();
  }
}, 60_000);

test("a component's /livez fails while a leader loop of it is stuck, naming the lease; /healthz says since when", async () => {
  const component = await startTestComponent(
    {
      ...testComponent,
      setup: (runtime) => {
        runtime.lead('stuck-scan', async ({ progress }) => (progress(), new Promise<void>(() => undefined)), {
          reportsProgress: true,
        });
        return testComponent.setup(runtime);
      },
    },
    {
      REDIS_URL: redis.url,
      CACHE_KEY_PREFIX: 'stall-livez',
      LEADER_STALL_MS: String(STALL_MS),
      LEADER_LEASE_DURATION_MS: '3000',
      LEADER_RENEW_DEADLINE_MS: '2000',
      LEADER_RETRY_PERIOD_MS: '250',
    },
  );
  try {
    const livez = await waitUntil(
      async () => {
        const response = await fetch(`${component.url}/livez`);
        return response.status === 503 && ((await response.json()) as { status: string; stalledLoops?: string[] });
      },
      15_000,
      '/livez failing',
    );
    expect(livez).toMatchObject({ status: 'stuck', stalledLoops: ['stuck-scan'] });
    const health = (await (await fetch(`${component.url}/healthz`)).json()) as {
      leases: Record<string, { leading: boolean; stalledForMs?: number }>;
    };
    expect(health.leases['stuck-scan']).toMatchObject({ leading: false, stalledForMs: expect.any(Number) });
    expect(component.logs.some((line) => line.includes('the leader loop made no progress in time'))).toBe(true);
  } finally {
    await component.stop();
  }
}, 60_000);
