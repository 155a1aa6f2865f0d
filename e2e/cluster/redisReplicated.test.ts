// The chart's replicated Redis for real: a second release of charts/frequency-gateway, in a namespace of its own
// enforcing the restricted Pod Security Standard, with redis.mode=replicated (a primary, 2 replicas, 3 Sentinels,
// soft anti-affinity on this one-node cluster) and REDIS_DURABILITY as the chart decides (replicated). Its servers
// and Sentinels must start and find each other through their headless Services; a broadcast and a sign-up must go
// through; then the primary's pod is killed (--grace-period=0 --force) while broadcasts trickle in: the Sentinels
// promote a replica, every component follows without a restart, every 202 is finalized once and notified once,
// and the old primary's pod comes back as a replica of the new one. Figures on lines starting with
// "cluster redis-replicated ". Reached from the host as the main suite reaches its release (docs/testing.md).
import { randomBytes } from 'node:crypto';
import { atSteadyRate, waitUntil, watchReadiness, type ReadinessProbe } from '@frequency-gateway/devstack';
import { cryptoWaitReady } from '@polkadot/util-crypto';
import {
  agreedPrimary,
  baseValues,
  prepareSuiteRelease,
  removeSuiteRelease,
  connectToRelease,
  type GatewayRelease,
  type KubeApi,
  LOGIN_URI,
  podOfHost,
  portOf,
  REDIS_NODES,
  REDIS_SENTINELS,
  RELEASE,
  replicasSeenBy,
  replicationOf,
  restartsOf,
  sentinelView,
  type WebhookReceiver,
  type ClusterImage,
  type GatewayClient,
  type List,
  type Pod,
  type Role,
  type Service,
} from '../src/cluster/index.js';

const REPLICAS = 2;
const SENTINELS = 3;
const PRIMARY_NAME = 'gateway';
const COMPONENTS: [Service, Role][] = (['account', 'content-publishing', 'content-watcher'] as const).flatMap(
  (service) => [
    [service, 'api'],
    [service, 'worker'],
  ],
);
/** One pod of each component (apis at one replica: two cores for everything), the devchain, IPFS, Redis's six. */
const RELEASE_PODS = COMPONENTS.length + 2 + 1 + REPLICAS + SENTINELS;
const WEBHOOK_SECRET = randomBytes(24).toString('hex');
const ACCOUNT_WEBHOOKS = '/account/webhooks/transaction-notify';
const CONTENT_WEBHOOKS = '/content-publishing/webhooks/transaction-notify';
/** The trickle through the failover: 5 broadcasts a second for a minute, the primary killed 15 s in. */
const TRICKLE = { count: 300, ratePerSecond: 5, killAt: 75 };

const say = (line: string) => process.stdout.write(`cluster redis-replicated ${line}\n`);
const seconds = (from: number, to = Date.now()) => ((to - from) / 1000).toFixed(1);

let kube: KubeApi;
let image: ClusterImage;
let release: GatewayRelease;
let receiver: WebhookReceiver;
let gateway: GatewayClient | undefined;
let installed = false;
let uninstalled = false;
/** The user the journeys signed up; the failover's broadcasts are theirs. */
let msaId: string | undefined;

/** Where the components reach each server: `<pod>.<headless Service>.<namespace>.svc`, as they announce it. */
const hostOf = (pod: string) => `${pod}.${REDIS_NODES}-headless.${release.namespace}.svc`;

function installValues(podCidr: string): object {
  const base = baseValues(image, release.namespace);
  const oneApi = { api: { replicas: 1 } };
  return {
    ...base,
    secrets: { values: { ...base.secrets.values, WEBHOOK_SECRET } },
    outbound: { allowedDestinations: [receiver.host] },
    networkPolicy: { egress: { webhooks: { cidrs: [podCidr] } } },
    redis: {
      ...base.redis,
      mode: 'replicated',
      replicated: { replicas: REPLICAS, sentinels: SENTINELS, podAntiAffinity: 'soft' },
    },
    account: {
      ...oneApi,
      config: { SIWF_V2_URI_VALIDATION: LOGIN_URI, WEBHOOK_BASE_URL: receiver.inCluster('/account') },
    },
    contentPublishing: {
      ...oneApi,
      config: { WEBHOOK_BASE_URL: receiver.inCluster('/content-publishing'), BATCH_INTERVAL_SECONDS: '2' },
    },
    contentWatcher: oneApi,
  };
}

/** The pods of the gateway's six components. */
async function componentPods(): Promise<Pod[]> {
  const pods = await Promise.all(COMPONENTS.map(([service, role]) => release.pods(`${service}-${role}`)));
  return pods.flat();
}

/**
 * A component pod's /readyz through the API server's proxy: its status, 0 when the pod did not answer (the API
 * server's own 5xx for a pod it cannot reach is not the component's 503, which names its checks).
 */
function readinessOf(pod: Pod): ReadinessProbe {
  const [, service, role] = /^(.*)-(api|worker)$/.exec(pod.metadata.labels?.['app.kubernetes.io/component'] ?? '')!;
  const port = portOf(service as Service, role as Role);
  return async () => {
    const answer = await kube.toPod(release.namespace, pod.metadata.name, port, '/readyz', 2000).catch(() => undefined);
    if (answer?.status === 200 || (answer?.status === 503 && answer.body.includes('"checks"'))) return answer.status;
    return 0;
  };
}

/** Each server's replication, by pod name. */
async function replicationByPod() {
  const pods = Array.from({ length: REPLICAS + 1 }, (_, index) => `${REDIS_NODES}-${index}`);
  return new Map(
    await Promise.all(pods.map(async (pod) => [pod, await replicationOf(release.namespace, pod)] as const)),
  );
}

/** One primary with every other server its replica, in sync; fails saying what each server says otherwise. */
async function groupSettledOn(primaryHost: string): Promise<void> {
  const servers = await replicationByPod();
  const problems: string[] = [];
  for (const [pod, server] of servers) {
    if (hostOf(pod) === primaryHost) {
      if (server.role !== 'master') problems.push(`${pod} is ${server.role}, not the primary`);
      const online = server.replicas.filter((replica) => replica.state === 'online').map((replica) => replica.host);
      const expected = [...servers.keys()].filter((other) => other !== pod).map(hostOf);
      if (JSON.stringify(online.sort()) !== JSON.stringify(expected.sort()))
        problems.push(`${pod} has replicas ${JSON.stringify(server.replicas)}, not ${expected.join(', ')} online`);
    } else if (server.role !== 'slave' || server.primaryHost !== primaryHost || !server.linkUp)
      problems.push(`${pod} is ${server.role} of ${server.primaryHost ?? '-'} (link ${server.linkUp ? 'up' : 'down'})`);
  }
  if (problems.length) throw new Error(problems.join('; '));
}

/** Waits until the Sentinels agree on a primary and the other servers are its replicas, in sync; returns its host. */
async function settledPrimary(timeoutMs: number): Promise<string> {
  let last = '';
  return waitUntil(
    async () => {
      try {
        const primary = await agreedPrimary(release.namespace, SENTINELS, PRIMARY_NAME);
        await groupSettledOn(primary);
        return primary;
      } catch (error) {
        last = (error as Error).message;
        return undefined;
      }
    },
    timeoutMs,
    () => `one primary the Sentinels agree on, every other server its replica; last: ${last}`,
    500,
  );
}

/**
 * Waits until every Sentinel sees the group as it is: `primary` the primary, the other two Sentinels, and the other
 * servers as replicas it reaches (flags `slave` alone, no `s_down` or `disconnected`). A Sentinel learns replicas
 * from the primary's INFO and Sentinels from their hellos, every few seconds.
 */
async function everySentinelSees(primary: string, timeoutMs: number): Promise<void> {
  const replicas = Array.from({ length: REPLICAS + 1 }, (_, index) => hostOf(`${REDIS_NODES}-${index}`))
    .filter((host) => host !== primary)
    .map((host) => `${host} slave`)
    .sort();
  const expected = JSON.stringify({ flags: 'master', otherSentinels: SENTINELS - 1, quorum: 2, replicas });
  let seen: string[] = [];
  await waitUntil(
    async () => {
      seen = await Promise.all(
        Array.from({ length: SENTINELS }, async (_, index) => {
          const sentinel = `${REDIS_SENTINELS}-${index}`;
          const [view, known] = await Promise.all([
            sentinelView(release.namespace, sentinel, PRIMARY_NAME),
            replicasSeenBy(release.namespace, sentinel, PRIMARY_NAME),
          ]);
          const listed = known.map((replica) => `${replica.host} ${replica.flags}`).sort();
          return JSON.stringify({
            flags: view.flags,
            otherSentinels: view.otherSentinels,
            quorum: view.quorum,
            replicas: listed,
          });
        }),
      );
      return seen.every((view) => view === expected);
    },
    timeoutMs,
    () => `every Sentinel seeing ${expected}; now: ${seen.join(' | ')}`,
    500,
  );
}

beforeAll(async () => {
  const started = Date.now();
  await cryptoWaitReady();
  ({ image, kube, release, receiver } = await prepareSuiteRelease('fg-e2e-redis'));
  say(`setup: ${image.repository}:${image.tag}, namespace ${release.namespace} (restricted) in ${seconds(started)} s`);
}, 45 * 60_000);

afterAll(async () => {
  await gateway?.close();
  // The servers' claims (and with them their volumes) go with the namespace.
  await removeSuiteRelease(release, installed && !uninstalled);
  kube?.close();
}, 300_000);

describe('helm install with redis.mode=replicated', () => {
  test('every pod Ready; the PDBs; one primary with 2 replicas in sync; the Sentinels agree and know each other', async () => {
    const nodes = await kube.get<List<{ spec: { podCIDR?: string } }>>('/api/v1/nodes');
    const started = Date.now();
    await release.install(installValues(nodes.items[0]?.spec.podCIDR ?? '10.244.0.0/16'));
    installed = true;
    const pods = await release.allReady(600_000, RELEASE_PODS);
    const readyAfter = seconds(started);
    const restarts = pods.reduce((sum, pod) => sum + restartsOf(pod), 0);

    const budgets = await kube.get<
      List<{
        metadata: { name: string };
        spec: { maxUnavailable?: number };
        status: { expectedPods?: number; currentHealthy?: number };
      }>
    >(`/apis/policy/v1/namespaces/${release.namespace}/poddisruptionbudgets`);
    const redisBudgets = budgets.items
      .filter((budget) => [REDIS_NODES, REDIS_SENTINELS].includes(budget.metadata.name))
      .map((budget) => `${budget.metadata.name} maxUnavailable ${budget.spec.maxUnavailable}`)
      .sort();
    expect(redisBudgets).toEqual([`${REDIS_NODES} maxUnavailable 1`, `${REDIS_SENTINELS} maxUnavailable 1`]);
    // The disruption controller counts the pods each budget covers.
    await waitUntil(
      async () => {
        const now = await kube.get<List<{ metadata: { name: string }; status: { currentHealthy?: number } }>>(
          `/apis/policy/v1/namespaces/${release.namespace}/poddisruptionbudgets`,
        );
        const healthy = (name: string) =>
          now.items.find((budget) => budget.metadata.name === name)?.status.currentHealthy;
        return healthy(REDIS_NODES) === REPLICAS + 1 && healthy(REDIS_SENTINELS) === SENTINELS;
      },
      60_000,
      'the Redis PodDisruptionBudgets counting their healthy pods',
    );

    // Each server on its own volume.
    const claims = await kube.get<List<{ metadata: { name: string }; status: { phase: string } }>>(
      `/api/v1/namespaces/${release.namespace}/persistentvolumeclaims`,
    );
    expect(claims.items.map((claim) => `${claim.metadata.name} ${claim.status.phase}`).sort()).toEqual([
      `data-${RELEASE}-ipfs-0 Bound`,
      ...Array.from({ length: REPLICAS + 1 }, (_, index) => `data-${REDIS_NODES}-${index} Bound`),
    ]);

    // The components go through the Sentinels and confirm their writes on a replica (the chart's choice).
    const configs = await kube.get<List<{ metadata: { name: string }; data?: Record<string, string> }>>(
      `/api/v1/namespaces/${release.namespace}/configmaps`,
    );
    const serviceConfigs = configs.items.filter((config) => config.data?.REDIS_URL);
    expect(serviceConfigs).toHaveLength(3);
    for (const config of serviceConfigs)
      expect(config.data).toMatchObject({
        REDIS_DURABILITY: 'replicated',
        REDIS_SENTINEL_NAME: PRIMARY_NAME,
        REDIS_SENTINELS: Array.from(
          { length: SENTINELS },
          (_, index) => `${REDIS_SENTINELS}-${index}.${REDIS_SENTINELS}-headless.${release.namespace}.svc:26379`,
        ).join(','),
      });

    const primary = await settledPrimary(120_000);
    const sentinelsFrom = Date.now();
    await everySentinelSees(primary, 120_000);
    const sentinelsAfter = seconds(sentinelsFrom);
    say(
      `install: ${pods.length} pods Ready ${readyAfter} s after helm install, restarts ${restarts}; primary ` +
        `${podOfHost(primary)} with ${REPLICAS} replicas online; ${SENTINELS} Sentinels agree, each reaching the ` +
        `${SENTINELS - 1} others and both replicas (${sentinelsAfter} s after the servers were in sync); PDBs ${redisBudgets.join(', ')}`,
    );
    expect(restarts).toBe(0);
    gateway = await connectToRelease(release);
  }, 900_000);
});

describe('journeys on the replicated Redis', () => {
  test('a SIWF sign-up and a broadcast: finalized, each notified once', async () => {
    expect(gateway).toBeDefined();
    const started = Date.now();
    const { referenceId: signUp } = await gateway!.signUp(`repl${randomBytes(3).toString('hex')}`);
    const signedUp = await receiver.notificationOf(ACCOUNT_WEBHOOKS, signUp, WEBHOOK_SECRET, 180_000);
    expect(signedUp.body).toMatchObject({ transactionType: 'SIWF_SIGNUP', status: 'SUCCESS', referenceId: signUp });
    msaId = String(signedUp.body.msaId);
    const answer = await gateway!.broadcast(msaId, {
      content: 'on a replicated Redis',
      published: new Date().toISOString(),
    });
    expect(answer.status).toBe(202);
    const referenceId = answer.body.referenceId as string;
    const [record] = await gateway!.settled([referenceId], 180_000);
    expect(record!.state).toBe('finalized');
    const notified = await receiver.notificationOf(CONTENT_WEBHOOKS, referenceId, WEBHOOK_SECRET);
    expect(notified.body).toMatchObject({ referenceId, status: 'SUCCESS' });
    say(`journeys: sign-up (MSA ${msaId}) and a broadcast finalized and notified in ${seconds(started)} s`);
  }, 420_000);
});

describe('the primary killed under a trickle of broadcasts', () => {
  test('the Sentinels promote a replica; every component follows without a restart; every 202 finalized and notified once; the old primary returns as a replica', async () => {
    expect(msaId).toBeDefined();
    const components = await componentPods();
    expect(components).toHaveLength(COMPONENTS.length);
    const before = new Map(components.map((pod) => [pod.metadata.name, `${pod.metadata.uid} ${restartsOf(pod)}`]));
    const oldPrimary = await settledPrimary(60_000);
    const victim = podOfHost(oldPrimary);
    const readiness = watchReadiness(components.map(readinessOf), 200);
    const tag = `failover-${release.namespace}`;
    const published = new Date().toISOString();
    let killedAt = 0;
    let promotion: Promise<{ primary: string; at: number }> | undefined;
    let regrouped: Promise<{ replicaAt: number; sentinelsAt: number }> | undefined;
    let answers: { status: number; referenceId?: string; error?: string }[];
    try {
      answers = await atSteadyRate(
        TRICKLE.count,
        TRICKLE.ratePerSecond,
        (index) =>
          gateway!.broadcast(msaId!, { content: `${tag} #${index}`, published }).then(
            (answer) => ({ status: answer.status, referenceId: answer.body.referenceId as string | undefined }),
            (error: unknown) => ({ status: 0, error: String((error as Error).cause ?? error) }),
          ),
        async (index) => {
          if (index !== TRICKLE.killAt) return;
          killedAt = Date.now();
          await release.deletePod(victim, 'force');
          // When the Sentinels name another primary (polled alongside the trickle).
          promotion = waitUntil(
            async () => {
              const primary = await agreedPrimary(release.namespace, SENTINELS, PRIMARY_NAME).catch(() => '');
              return primary && primary !== oldPrimary ? { primary, at: Date.now() } : undefined;
            },
            120_000,
            'the Sentinels to agree on a new primary',
            250,
          );
          // Then when the old primary's pod (a new pod of the same name) is a replica of the new primary, its link
          // up, and when every Sentinel sees the group so (polled alongside the rest).
          regrouped = promotion.then(async ({ primary }) => {
            await waitUntil(
              async () => {
                const server = await replicationOf(release.namespace, victim);
                return server.role === 'slave' && server.primaryHost === primary && server.linkUp;
              },
              300_000,
              `${victim} back as a replica of ${podOfHost(primary)}`,
              500,
            );
            const replicaAt = Date.now();
            await everySentinelSees(primary, 120_000);
            return { replicaAt, sentinelsAt: Date.now() };
          });
          regrouped.catch(() => undefined);
        },
      );
      expect(promotion).toBeDefined();
      await promotion;
      // Every component ready again.
      const probes = components.map(readinessOf);
      await waitUntil(
        async () => (await Promise.all(probes.map((probe) => probe()))).every((status) => status === 200),
        120_000,
        'every component ready again',
      );
    } finally {
      await readiness.stop();
    }
    const { primary: newPrimary, at: promotedAt } = await promotion!;
    const figures = readiness.figuresSince(killedAt);

    // Every 202 finalized once, notified once (a second webhook-id for one request fails; the same one sent again
    // is counted apart, as receivers drop it by that id).
    const accepted = answers.filter((answer) => answer.status === 202).map((answer) => answer.referenceId!);
    const refused = answers.filter((answer) => answer.status !== 202);
    const records = await gateway!.settled(accepted, 600_000);
    const notices = async () => {
      const ids = new Map<string, Set<string>>();
      const deliveries = new Map<string, number>();
      for (const delivery of await receiver.at(CONTENT_WEBHOOKS)) {
        const id = String(delivery.body.referenceId);
        ids.set(id, (ids.get(id) ?? new Set()).add(String(delivery.headers['webhook-id'])));
        deliveries.set(id, (deliveries.get(id) ?? 0) + 1);
      }
      return { ids, deliveries };
    };
    await waitUntil(
      async () => {
        const { ids } = await notices();
        return accepted.every((id) => ids.has(id));
      },
      180_000,
      'a webhook for every accepted broadcast',
    ).catch(() => undefined);
    const { ids, deliveries } = await notices();
    const finalized = records.filter((record) => record.state === 'finalized').length;
    const finalizedTwice = records.filter(
      (record) => record.history.filter((step) => step.state === 'finalized').length > 1,
    ).length;
    const lost = accepted.filter((id, index) => records[index]!.state !== 'finalized' || !ids.has(id)).length;
    const duplicated = accepted.filter((id) => (ids.get(id)?.size ?? 0) > 1).length;
    const sentAgain = accepted.filter((id) => (deliveries.get(id) ?? 0) > (ids.get(id)?.size ?? 0)).length;

    // The old primary's pod (a new pod of the same name) comes back as a replica of the new primary, and every
    // Sentinel reaches it again (it has a new address under the same name). Failures are kept until the figures
    // are printed.
    const regrouping: string[] = [];
    const { replicaAt, sentinelsAt } = await regrouped!.catch((error: Error) => {
      regrouping.push(error.message);
      return { replicaAt: Number.NaN, sentinelsAt: Number.NaN };
    });
    const settled = await settledPrimary(180_000).catch((error: Error) => (regrouping.push(error.message), ''));
    const after = await componentPods();
    const restarts = after.reduce((sum, pod) => sum + restartsOf(pod), 0);
    const refusals = [...new Set(refused.map((answer) => (answer.status ? `${answer.status}` : answer.error)))];
    say(
      `failover: ${victim} killed at #${TRICKLE.killAt} of ${TRICKLE.count} (${TRICKLE.ratePerSecond}/s); the Sentinels ` +
        `named ${podOfHost(newPrimary)} ${seconds(killedAt, promotedAt)} s later; readiness not ready ` +
        `${figures.firstNotReadyMs === undefined ? 'never' : `${(figures.firstNotReadyMs / 1000).toFixed(1)} s`} after ` +
        `the kill (${figures.unavailablePolls} polls with a 503), all ready ${((figures.backReadyMs ?? NaN) / 1000).toFixed(1)} s ` +
        `after it; accepted ${accepted.length} / finalized ${finalized} / lost ${lost} / duplicated ${duplicated} ` +
        `(refused ${refused.length}${refusals.length ? `: ${refusals.slice(0, 3).join(', ')}` : ''}; finalized twice ` +
        `${finalizedTwice}; the same webhook sent again ${sentAgain}); ${victim} a replica of ${podOfHost(newPrimary)} ` +
        `${seconds(killedAt, replicaAt)} s after the kill, every Sentinel reaching it again ${seconds(killedAt, sentinelsAt)} s after it` +
        `${regrouping.length ? ` (not so: ${regrouping.join('; ')})` : ''}; component restarts ${restarts}`,
    );
    expect(podOfHost(newPrimary)).not.toBe(victim);
    expect(regrouping).toEqual([]);
    expect(settled).toBe(newPrimary);
    expect(accepted.length).toBeGreaterThan(TRICKLE.count / 2);
    expect({ finalized, lost, duplicated, finalizedTwice }).toEqual({
      finalized: accepted.length,
      lost: 0,
      duplicated: 0,
      finalizedTwice: 0,
    });
    // Readiness said Redis was away, then came back; the same pods, never restarted.
    expect(figures.unavailablePolls).toBeGreaterThan(0);
    expect(new Map(after.map((pod) => [pod.metadata.name, `${pod.metadata.uid} ${restartsOf(pod)}`]))).toEqual(before);
  }, 1_500_000);
});

describe('helm uninstall', () => {
  test('the release, then the servers’ claims: their volumes are deleted', async () => {
    await gateway?.close();
    gateway = undefined;
    await release.helm(['uninstall', RELEASE, '--wait', '--timeout', '5m']);
    uninstalled = true;
    await waitUntil(async () => (await release.pods()).length === 0, 180_000, "the release's pods gone");
    const claimsPath = `/api/v1/namespaces/${release.namespace}/persistentvolumeclaims`;
    const claims = await kube.get<List<{ metadata: { name: string }; spec: { volumeName?: string } }>>(claimsPath);
    const volumes = claims.items.map((claim) => claim.spec.volumeName).filter(Boolean);
    expect(volumes).toHaveLength(REPLICAS + 2);
    for (const claim of claims.items) await kube.request('DELETE', `${claimsPath}/${claim.metadata.name}`);
    // The local-path volumes are deleted once released (reclaim policy Delete).
    await waitUntil(
      async () => {
        const left = await kube.get<List<{ metadata: { name: string } }>>('/api/v1/persistentvolumes');
        return !left.items.some((volume) => volumes.includes(volume.metadata.name));
      },
      180_000,
      "the servers' volumes deleted",
    );
    say(`uninstall: release gone, ${claims.items.length} claims and their volumes deleted`);
  }, 600_000);
});
