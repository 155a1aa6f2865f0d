import { CoordinationV1Api } from '@kubernetes/client-node';
import { startRedisServer, waitUntil } from '@frequency-gateway/devstack';
import { createLogger, KubernetesLeaseLock, leaseObjectName, runAsLeader } from '../src/index.js';
import { KubernetesApiStandIn } from '@frequency-gateway/devstack/kubernetes';
import { startTestComponent, testComponent } from './support/testComponent.js';

/** metav1.MicroTime as the API server accepts it: RFC 3339 with exactly six fractional digits. */
const MICRO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}(Z|[+-]\d\d:\d\d)$/;

describe('Kubernetes Lease lock (against a stand-in of the Lease API)', () => {
  const api = new KubernetesApiStandIn();
  let kubeConfig: Awaited<ReturnType<KubernetesApiStandIn['start']>>;
  beforeAll(async () => (kubeConfig = await api.start()));
  afterAll(async () => api.stop());

  const lockFor = (name: string) => new KubernetesLeaseLock(kubeConfig, 'gateway', name);

  it('acquires by creating the Lease, refuses a second holder, and renews', async () => {
    const a = lockFor('acquire');
    const b = lockFor('acquire');
    expect(await a.tryAcquireOrRenew('pod-a', 2000)).toEqual({ held: true, holder: 'pod-a', token: 0 });
    expect(await b.tryAcquireOrRenew('pod-b', 2000)).toEqual({ held: false, holder: 'pod-a', token: 0 });
    const before = api.leases.get('gateway/acquire')!.spec.renewTime as string;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await a.tryAcquireOrRenew('pod-a', 2000)).toMatchObject({ held: true, token: 0 });
    const after = api.leases.get('gateway/acquire')!;
    expect(Date.parse(after.spec.renewTime as string)).toBeGreaterThan(Date.parse(before));
    expect(after.spec).toMatchObject({ holderIdentity: 'pod-a', leaseDurationSeconds: 2, leaseTransitions: 0 });
    expect([after.spec.acquireTime, after.spec.renewTime]).toEqual([
      expect.stringMatching(MICRO_TIME),
      expect.stringMatching(MICRO_TIME),
    ]);
  });

  it('is refused a Lease whose times lack six fractional digits, as the API server refuses it', async () => {
    const write = (time: string) =>
      fetch(`${api.url}/apis/coordination.k8s.io/v1/namespaces/gateway/leases`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name: 'strict', namespace: 'gateway' },
          spec: { holderIdentity: 'pod-a', leaseDurationSeconds: 15, acquireTime: time, renewTime: time },
        }),
      });
    const refused = await write('2026-11-25T17:08:02.174Z');
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { message: string }).message).toBe(
      'parsing time "2026-11-25T17:08:02.174Z" as "2006-01-02T15:04:05.000000Z07:00"',
    );
    expect((await write('2026-11-25T17:08:02.174000Z')).status).toBe(201);
  });

  it('loses a race on a stale resourceVersion with a conflict, not a double win', async () => {
    const a = lockFor('race');
    const b = lockFor('race');
    await a.tryAcquireOrRenew('pod-a', 1000);
    await a.release('pod-a');
    // Both read the released lease; both try to write it. Exactly one wins.
    const results = await Promise.all([a.tryAcquireOrRenew('pod-a', 1000), b.tryAcquireOrRenew('pod-b', 1000)]);
    expect(results.filter((r) => r.held)).toHaveLength(1);
  });

  it('takes over an expired lease and counts the transition', async () => {
    const a = lockFor('takeover');
    const b = lockFor('takeover');
    await a.tryAcquireOrRenew('pod-a', 1000);
    expect((await b.tryAcquireOrRenew('pod-b', 1000)).held).toBe(false);
    // pod-a stops renewing; pod-b waits out the lease duration on its own clock.
    const won = await waitUntil(async () => {
      const attempt = await b.tryAcquireOrRenew('pod-b', 1000);
      return attempt.held ? attempt : undefined;
    }, 3000);
    expect(won.token).toBe(1);
    expect(api.leases.get('gateway/takeover')!.spec).toMatchObject({ holderIdentity: 'pod-b', leaseTransitions: 1 });
    expect((await a.tryAcquireOrRenew('pod-a', 1000)).held).toBe(false);
  });

  it('runs the loop on exactly one elector and hands over on stop', async () => {
    const logger = createLogger({ component: 't', level: 'silent', pretty: false });
    const timing = { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 100 };
    const leading = new Set<string>();
    const elect = (identity: string) =>
      runAsLeader(
        { name: 'loop', identity, lock: lockFor(leaseObjectName('Gateway Scanner!')), logger, timing },
        async ({ signal }) => {
          leading.add(identity);
          await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
          leading.delete(identity);
        },
      );
    const first = elect('pod-1');
    await waitUntil(async () => leading.size === 1, 3000);
    const requestsBefore = api.leaseRequests;
    const second = elect('pod-2');
    // A few rounds of both (each tries or renews every 100 ms) with pod-2 refused every time.
    await waitUntil(async () => api.leaseRequests - requestsBefore >= 6, 3000, 'both electors trying');
    expect([...leading]).toEqual(['pod-1']);
    const handedOverAt = Date.now();
    await first.stop();
    await waitUntil(async () => leading.has('pod-2'), 3000);
    // Released on stop: the successor did not wait for the 3 s lease to expire.
    expect(Date.now() - handedOverAt).toBeLessThan(2000);
    await second.stop();
    const stored = await kubeConfig
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ name: 'gateway-scanner', namespace: 'gateway' });
    expect(stored.spec?.holderIdentity).toBe('');
  });
});

describe('leadership of a component in a cluster (Kubernetes Lease on a stand-in of the API server)', () => {
  const api = new KubernetesApiStandIn();
  let kubeConfig: Awaited<ReturnType<KubernetesApiStandIn['start']>>;
  beforeAll(async () => (kubeConfig = await api.start()));
  afterAll(async () => api.stop());

  it('shows in /healthz and the metric; failing lease writes are told once at warn, not per attempt', async () => {
    const redis = await startRedisServer();
    const leadingComponent: typeof testComponent = {
      ...testComponent,
      setup: (runtime) => {
        runtime.lead(
          'scanner',
          ({ signal }) => new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve())),
        );
        return testComponent.setup(runtime);
      },
    };
    const component = await startTestComponent(
      leadingComponent,
      {
        REDIS_URL: redis.url,
        LOG_LEVEL: 'debug',
        POD_NAME: 'scanner-pod-1',
        POD_NAMESPACE: 'gateway',
        KUBERNETES_SERVICE_HOST: '10.96.0.1',
        LEADER_LEASE_DURATION_MS: '3000',
        LEADER_LEASE_PREFIX: 'gw-frequency-gateway',
        LEADER_RENEW_DEADLINE_MS: '2000',
        LEADER_RETRY_PERIOD_MS: '150',
      },
      { kubeConfig: () => kubeConfig },
    );
    type Health = { leases?: Record<string, { leading: boolean; lock: string; holder?: string; error?: string }> };
    const scanner = async () => ((await (await fetch(`${component.url}/healthz`)).json()) as Health).leases?.scanner;
    const gauge = async () =>
      /leader_is_leader\{[^}]*lease="scanner"[^}]*\} (\d)/.exec(
        await (await fetch(`${component.url}/metrics`)).text(),
      )?.[1];
    const logLines = () => component.logs.map((line) => JSON.parse(line) as { level: string; msg: string });
    try {
      await waitUntil(async () => (await scanner())?.leading, 5000);
      expect(await scanner()).toMatchObject({
        leading: true,
        lock: 'kubernetes lease gateway/gw-frequency-gateway-test-scanner',
        holder: 'scanner-pod-1',
      });
      expect(await gauge()).toBe('1');
      expect(api.leases.get('gateway/gw-frequency-gateway-test-scanner')?.spec.renewTime).toMatch(MICRO_TIME);

      api.leasesBehaviour = 'fail';
      const failingFrom = api.leaseRequests;
      // The leader cannot renew: it steps down after the renew deadline and keeps trying every retry period.
      await waitUntil(async () => (await scanner())?.leading === false, 5000);
      await waitUntil(async () => api.leaseRequests - failingFrom >= 25, 15_000);
      expect(await scanner()).toMatchObject({ leading: false, error: expect.stringContaining('leader changed') });
      expect(await gauge()).toBe('0');

      api.leasesBehaviour = 'accept';
      await waitUntil(async () => (await scanner())?.leading, 5000);
      expect((await scanner())?.error).toBeUndefined();
    } finally {
      api.leasesBehaviour = 'accept';
      await component.stop();
      await redis.stop();
    }
    const lines = logLines();
    // One warning when attempts start failing and one line when they work again: a transition, not an attempt.
    // (An attempt that outlasts the retry period on a loaded machine counts as failed too, so a run may see a
    // second, short episode; each is told once.)
    const warnings = lines.filter((line) => line.msg.startsWith('lease attempts fail'));
    const failedAttempts = lines.filter((line) => line.msg === 'lease attempt failed');
    expect(warnings.length).toBeGreaterThanOrEqual(1);
    expect(warnings.every((line) => line.level === 'warn')).toBe(true);
    expect(lines.filter((line) => line.msg === 'lease attempts work again')).toHaveLength(warnings.length);
    expect(failedAttempts.length).toBeGreaterThanOrEqual(10 * warnings.length);
    // Each episode's warning stands for its second failed attempt; the others are at debug.
    expect(failedAttempts.every((line) => line.level === 'debug')).toBe(true);
  });
});
