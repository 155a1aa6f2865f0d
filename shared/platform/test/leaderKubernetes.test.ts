import { CoordinationV1Api } from '@kubernetes/client-node';
import { createLogger, KubernetesLeaseLock, leaseObjectName, runAsLeader } from '../src/index.js';
import { KubernetesApiStandIn } from './support/kubernetesApiStandIn.js';
import { eventually } from './support/processes.js';

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
    const won = await eventually(async () => {
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
    await eventually(async () => leading.size === 1, 3000);
    const second = elect('pod-2');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect([...leading]).toEqual(['pod-1']);
    const handedOverAt = Date.now();
    await first.stop();
    await eventually(async () => leading.has('pod-2'), 3000);
    // Released on stop: the successor did not wait for the 3 s lease to expire.
    expect(Date.now() - handedOverAt).toBeLessThan(2000);
    await second.stop();
    const stored = await kubeConfig
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ name: 'gateway-scanner', namespace: 'gateway' });
    expect(stored.spec?.holderIdentity).toBe('');
  });
});
