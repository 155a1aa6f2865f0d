import { startRedisServer, waitUntil } from '@frequency-gateway/devstack';
import { startTestComponent, testComponent } from './support/testComponent.js';

describe('readiness follows Redis', () => {
  it('turns 503 when Redis dies, 200 when it returns, while /livez stays 200', async () => {
    const redis = await startRedisServer();
    const component = await startTestComponent(testComponent, { REDIS_URL: redis.url });
    const status = async (path: string) => (await fetch(`${component.url}${path}`)).status;
    let livezFailures = 0;
    let probing: Promise<unknown> = Promise.resolve();
    const liveness = setInterval(() => {
      probing = status('/livez').then(
        (s) => (livezFailures += s === 200 ? 0 : 1),
        () => (livezFailures += 1),
      );
    }, 100);
    try {
      await waitUntil(async () => (await status('/readyz')) === 200, 5000);
      const transitions = () => component.logs.filter((line) => line.includes('dependency redis is'));
      // On a loaded machine the first check may time out before one passes (pending→down→up): count from here.
      const before = transitions().length;

      await redis.kill('SIGKILL');
      const killedAt = Date.now();
      const notReady = await waitUntil(async () => {
        const response = await fetch(`${component.url}/readyz`);
        return response.status === 503
          ? ((await response.json()) as { checks: Record<string, { status: string; error?: string }> })
          : undefined;
      }, 5000);
      expect(Date.now() - killedAt).toBeLessThan(5000);
      expect(notReady.checks.redis?.status).toBe('down');
      expect(notReady.checks.redis?.error).toBeTruthy();

      await redis.restart();
      await waitUntil(async () => (await status('/readyz')) === 200, 10_000);
      expect(livezFailures).toBe(0);
      // up→down, down→up: one line each, not one per poll.
      const changes = transitions().slice(before);
      expect(changes).toHaveLength(2);
      expect(changes[0]).toContain('dependency redis is down');
      expect(changes[1]).toContain('dependency redis is up');
    } finally {
      clearInterval(liveness);
      // Let the last liveness request finish before the server goes away.
      await probing;
      await component.stop();
      await redis.stop();
    }
  });
});
