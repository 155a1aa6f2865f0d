import type { KubeConfig } from '@kubernetes/client-node';
import { startRedisServer, waitUntil } from '@frequency-gateway/devstack';
import {
  createLogger,
  KubernetesPodEvents,
  ReadinessController,
  recordReadinessEvents,
  secretScrubber,
} from '../src/index.js';
import { KubernetesApiStandIn, type RecordedEvent } from '@frequency-gateway/devstack/kubernetes';
import { captureLogLines } from './support/logLines.js';
import { startTestComponent, testComponent } from './support/testComponent.js';

const pod = { name: 'account-api-7d9f8-x2x9k', namespace: 'gateway', uid: '0b7c4a9e-3f51-4f7e-9d1e-2c7f0a6b5e11' };

function capturedLogger() {
  const { stream, lines } = captureLogLines();
  return {
    logger: createLogger({ component: 'account-api', level: 'debug', pretty: false, destination: stream }),
    lines,
  };
}

/** A readiness controller with one check whose verdict the test sets, its transitions recorded as pod events. */
function readinessOnThePod(kubeConfig: KubeConfig, secrets: string[] = [], timeoutMs = 5000) {
  const { logger, lines } = capturedLogger();
  const readiness = new ReadinessController({ logger, timeoutMs: 1000 });
  let failure: string | undefined;
  readiness.add({
    name: 'chain',
    probe: async () => (failure === undefined ? undefined : Promise.reject(new Error(failure))),
  });
  const events = new KubernetesPodEvents({
    kubeConfig,
    pod,
    component: 'account-api',
    logger,
    scrub: secretScrubber(secrets),
    timeoutMs,
  });
  recordReadinessEvents(readiness, events);
  const check = async (error?: string) => {
    failure = error;
    return readiness.checkNow('chain');
  };
  return { readiness, events, check, lines };
}

describe('readiness transitions as events on the pod (against a stand-in of the API server)', () => {
  const api = new KubernetesApiStandIn();
  let kubeConfig: KubeConfig;
  beforeAll(async () => (kubeConfig = await api.start()));
  afterAll(async () => api.stop());
  beforeEach(() => {
    api.events.length = 0;
    api.eventRequests = 0;
    api.eventsBehaviour = 'accept';
  });

  it('records up, down, up and shutdown on the pod, each event complete, without the secrets of an error', async () => {
    const { readiness, events, check } = readinessOnThePod(kubeConfig, ['t0ken-from-config']);
    await check();
    await check('auth t0ken-from-config refused by wss://operator:chain-pass@rpc.example:443/ws');
    await check();
    readiness.markShuttingDown();
    await events.settle();

    expect(api.events.map((e) => [e.type, e.reason, e.message])).toEqual([
      ['Normal', 'DependencyUp', 'dependency chain is up'],
      ['Normal', 'Ready', 'every required dependency is up'],
      [
        'Warning',
        'DependencyDown',
        'dependency chain is down: auth [redacted] refused by wss://***@rpc.example:443/ws',
      ],
      ['Warning', 'NotReady', 'not ready: chain is down'],
      ['Normal', 'DependencyUp', 'dependency chain is up'],
      ['Normal', 'Ready', 'every required dependency is up'],
      ['Normal', 'ShuttingDown', 'shutting down: not ready, so traffic drains'],
    ]);
    const everything = JSON.stringify(api.events);
    expect(everything).not.toContain('t0ken-from-config');
    expect(everything).not.toContain('chain-pass');

    for (const event of api.events) {
      expect(event.involvedObject).toEqual({ apiVersion: 'v1', kind: 'Pod', ...pod });
      expect(event.metadata.namespace).toBe(pod.namespace);
      expect(event.metadata.name).toMatch(new RegExp(`^${pod.name.replaceAll('.', '\\.')}\\.[0-9a-f]+$`));
      expect(event).toMatchObject({
        source: { component: 'account-api' },
        reportingComponent: 'account-api',
        reportingInstance: pod.name,
        count: 1,
      });
      expect(event.action).toMatch(/^[A-Z][A-Za-z]+$/);
      expect(Date.parse(event.firstTimestamp!)).toBeGreaterThan(Date.now() - 60_000);
      expect(event.lastTimestamp).toBe(event.firstTimestamp);
      expect(event.eventTime).toMatch(/\.\d{6}Z$/);
    }
    expect(new Set(api.events.map((e) => e.metadata.name)).size).toBe(api.events.length);
  });

  it.each([
    ['fail', 'the API server answered 500'],
    ['hang', 'no answer within 3000 ms'],
  ] as const)('leaves readiness alone when the API server does %s, and warns about it once', async (behaviour, why) => {
    api.eventsBehaviour = behaviour;
    // No answer comes before the release below: a server that fails does so only after the three checks.
    const release = api.holdEvents();
    const { events, check, lines, readiness } = readinessOnThePod(kubeConfig, [], 3000);
    const podWarnings = () => lines.filter((line) => line.level === 'warn' && String(line.msg).includes('pod'));
    expect((await check()).status).toBe('up');
    expect(readiness.isReady()).toBe(true);
    expect((await check('connection refused')).status).toBe('down');
    expect(readiness.isReady()).toBe(false);
    expect((await check()).status).toBe('up');
    expect(readiness.isReady()).toBe(true);
    // Recording waits on nothing: the checks are done while every event is still unanswered (a hung one is
    // given up on only after 3 s), so nothing about them has been logged yet.
    let settled = false;
    const settling = events.settle().then(() => (settled = true));
    await waitUntil(async () => api.eventRequests === 6, 5000);
    expect(settled).toBe(false);
    expect(podWarnings()).toHaveLength(0);

    release();
    // A server that never answers is given up on after the timeout, so this ends in both cases.
    await settling;
    expect(api.eventRequests).toBe(6);
    expect(api.events).toHaveLength(0);
    expect(podWarnings()).toHaveLength(1);
    expect(String(podWarnings()[0]!.msg)).toContain(why);
    expect(lines.filter((line) => line.level === 'debug' && String(line.msg).includes('pod event'))).toHaveLength(5);
  });
});

describe('a component records readiness events only inside a cluster', () => {
  const api = new KubernetesApiStandIn();
  let kubeConfig: KubeConfig;
  beforeAll(async () => (kubeConfig = await api.start()));
  afterAll(async () => api.stop());

  const inCluster = {
    POD_NAME: pod.name,
    POD_NAMESPACE: pod.namespace,
    POD_UID: pod.uid,
    KUBERNETES_SERVICE_HOST: '10.96.0.1',
  };

  it('with POD_NAME, POD_NAMESPACE and KUBERNETES_SERVICE_HOST: Redis down and up again are on the pod', async () => {
    const redis = await startRedisServer({ password: 'redis-pass-on-pod' });
    const component = await startTestComponent(
      testComponent,
      { REDIS_URL: redis.url, ...inCluster },
      { kubeConfig: () => kubeConfig },
    );
    const reasons = () => api.events.map((e) => e.reason);
    try {
      await waitUntil(async () => reasons().includes('Ready'), 5000);
      await redis.kill('SIGKILL');
      await waitUntil(async () => reasons().includes('NotReady'), 5000);
      await redis.restart();
      await waitUntil(async () => reasons().filter((r) => r === 'Ready').length === 2, 10_000);
    } finally {
      await component.stop();
      await redis.stop();
    }
    // Readiness flips exactly so, each flip right after the dependency event that caused it; a loaded machine may add
    // a dependency flap of its own (a first check timing out), but nothing comes after ShuttingDown: a check that
    // ends once readiness stopped (its connections closing) reports nothing.
    const all = reasons();
    expect(all.filter((reason) => !reason?.startsWith('Dependency'))).toEqual([
      'Ready',
      'NotReady',
      'Ready',
      'ShuttingDown',
    ]);
    expect(all[all.indexOf('NotReady') - 1]).toBe('DependencyDown');
    expect(all[all.lastIndexOf('Ready') - 1]).toBe('DependencyUp');
    expect(all.at(-1)).toBe('ShuttingDown');
    const down = api.events.find((e) => e.reason === 'DependencyDown') as RecordedEvent;
    expect(down.message).toMatch(/^dependency redis is down: /);
    expect(down.involvedObject).toEqual({ apiVersion: 'v1', kind: 'Pod', ...pod });
    expect(down.reportingComponent).toBe('test-api');
    expect(JSON.stringify(api.events)).not.toContain('redis-pass-on-pod');
  });

  it.each(['POD_NAME', 'POD_NAMESPACE', 'KUBERNETES_SERVICE_HOST'] as const)(
    'without %s: none, and readiness is the same',
    async (missing) => {
      const redis = await startRedisServer();
      const requestsBefore = api.eventRequests;
      const env: NodeJS.ProcessEnv = { REDIS_URL: redis.url, ...inCluster };
      delete env[missing];
      const component = await startTestComponent(testComponent, env, { kubeConfig: () => kubeConfig });
      try {
        await waitUntil(async () => (await fetch(`${component.url}/readyz`)).status === 200, 5000);
      } finally {
        await component.stop();
        await redis.stop();
      }
      expect(api.eventRequests).toBe(requestsBefore);
    },
  );
});
