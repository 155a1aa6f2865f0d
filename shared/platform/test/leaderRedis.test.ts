import { startRedisServer, waitUntil, type LocalRedis } from '@frequency-gateway/devstack';
import { Redis } from 'ioredis';
import { runScript, type RunningScript } from './support/processes.js';

describe('Redis lease between real processes', () => {
  let redis: LocalRedis;
  const contenders: RunningScript[] = [];
  beforeAll(async () => (redis = await startRedisServer()));
  afterAll(async () => {
    for (const contender of contenders) contender.child.kill('SIGKILL');
    await redis.stop();
  });

  it('lets exactly one process lead, and another take over within the lease after kill -9', async () => {
    const leaseDurationMs = 3000;
    for (const identity of ['one', 'two'])
      contenders.push(runScript('test/fixtures/leaseContender.ts', { REDIS_URL: redis.url, IDENTITY: identity }));
    await Promise.all(contenders.map((c) => c.waitForLine((line) => line.event === 'started')));
    const first = await Promise.race(contenders.map((c) => c.waitForLine((line) => line.event === 'leading')));
    // Watch both for a few rounds (each runs the lease script every 250 ms, the leader to renew, the other to
    // try): never two leaders.
    const admin = new Redis(redis.url);
    const scriptRuns = async () =>
      Number(/cmdstat_evalsha:calls=(\d+)/.exec(await admin.info('commandstats'))?.[1] ?? 0);
    const runsBefore = await scriptRuns();
    await waitUntil(
      async () => (await scriptRuns()) - runsBefore >= 8,
      10_000,
      'both contenders running the lease script',
    );
    admin.disconnect();
    const leadingLines = contenders.flatMap((c) => c.lines.filter((line) => line.event === 'leading'));
    expect(leadingLines).toHaveLength(1);

    const leader = contenders.find((c) => c.lines.some((line) => line.event === 'leading'))!;
    const follower = contenders.find((c) => c !== leader)!;
    const killedAt = Date.now();
    leader.child.kill('SIGKILL');
    const second = await follower.waitForLine((line) => line.event === 'leading', 10_000);
    expect(Number(second.at) - killedAt).toBeLessThanOrEqual(leaseDurationMs + 500);
    expect(Number(second.token)).toBeGreaterThan(Number(first.token));
  }, 120_000);
});
