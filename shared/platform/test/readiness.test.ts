import { startRedisServer, waitUntil } from '@frequency-gateway/devstack';
import { createLogger, ReadinessController, type ReadinessTransition } from '../src/index.js';
import { captureLogLines } from './support/logLines.js';
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

describe('a readiness check in flight when readiness stops', () => {
  it('reports nothing: the connections it probes are being closed by the component itself', async () => {
    const { stream } = captureLogLines();
    const logger = createLogger({ component: 'test', level: 'debug', pretty: false, destination: stream });
    const readiness = new ReadinessController({ logger, timeoutMs: 5000, intervalMs: 50 });
    let fail: ((error: Error) => void) | undefined;
    let probes = 0;
    readiness.add({
      name: 'redis',
      probe: () => (++probes === 1 ? Promise.resolve() : new Promise<void>((_, reject) => (fail = reject))),
    });
    const heard: ReadinessTransition[] = [];
    readiness.onTransition((transition) => heard.push(transition));
    readiness.start();
    await waitUntil(async () => fail !== undefined, 5000, 'the second probe in flight');
    expect(heard.map((t) => (t.kind === 'check' ? t.status : t.ready))).toEqual(['up', true]);
    readiness.markShuttingDown();
    readiness.stop();
    fail!(new Error('Connection is closed.'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(heard.map((t) => (t.kind === 'check' ? t.status : t.ready))).toEqual(['up', true, false]);
    expect(readiness.snapshot().checks.redis?.status).toBe('up');
  });
});
