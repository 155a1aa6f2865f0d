// The chart for real: one release of charts/frequency-gateway in the project's local Kubernetes (dev/cluster), in a
// namespace enforcing the restricted Pod Security Standard, with the image built from the Dockerfile, the in-cluster
// devchain and the bundled Redis and IPFS on volumes. The suites share that release and run in this order, each
// leaving it as the next expects: the last release installed from an OCI registry and upgraded under load to this
// checkout, helm test, journeys, leader election, a worker killed under load, autoscaling and a rollback, the keys
// moved to a secret store, the readiness controller (the devchain goes away: its state is lost, so it comes last)
// and the uninstall. Each prints its figures on one line starting with "cluster ".
// Everything is reached from the host, which is the node: the apis, the IPFS gateway and the receiver through NodePort
// Services on the node's address, the devchain through a port-forward on loopback, pods through the API server's proxy. Without root, the cluster binaries, Docker or Helm it fails, saying what is missing: never skips.
import { randomBytes } from 'node:crypto';
import { callJson, holdsFor, waitUntil, type JsonAnswer } from '@frequency-gateway/devstack';
import { verifyWebhook } from '@frequency-gateway/webhooks';
import { cryptoWaitReady } from '@polkadot/util-crypto';
import {
  baseValues,
  buildPreviousRelease,
  ChartRegistry,
  type PreviousRelease,
  prepareSuiteRelease,
  removeSuiteRelease,
  componentOf,
  deliveredOnce,
  eachLimited,
  ExternalSecretsOperator,
  FULLNAME,
  connectToRelease,
  type GatewayClient,
  type GatewayRelease,
  type KubeApi,
  kubectl,
  LEADER_LOOPS,
  LEASES,
  leaseOf,
  LOGIN_URI,
  podMetric,
  podReady,
  portOf,
  RELEASE,
  restartsOf,
  SERVICE_KEYS,
  untag,
  type WebhookReceiver,
  type ClusterImage,
  type Deployment,
  type KubeEvent,
  type List,
  type Pod,
  type Service,
  type SiwfUser,
} from '../src/cluster/index.js';

const SERVICES: Service[] = ['account', 'content-publishing', 'content-watcher'];
/** The components that use the chain (the content watcher's api does not). */
const CHAIN_USERS = [
  componentOf('account', 'api'),
  componentOf('account', 'worker'),
  componentOf('content-publishing', 'api'),
  componentOf('content-publishing', 'worker'),
  componentOf('content-watcher', 'worker'),
];
/** Six api pods (two replicas each), three workers, the devchain, Redis and IPFS. */
const RELEASE_PODS = 12;
const WEBHOOK_SECRET = randomBytes(24).toString('hex');
const ACCOUNT_WEBHOOKS = '/account/webhooks/transaction-notify';
const CONTENT_WEBHOOKS = '/content-publishing/webhooks/transaction-notify';
/** Where the content watcher delivers broadcasts (registered in the journeys). */
const WATCHER_PATH = '/watcher/broadcasts';

const say = (line: string) => process.stdout.write(`${line}\n`);
const seconds = (since: number) => ((Date.now() - since) / 1000).toFixed(1);

let kube: KubeApi;
let image: ClusterImage;
let release: GatewayRelease;
let receiver: WebhookReceiver;
let gateway: GatewayClient;
/** The last release's image, tagged in the cluster for its install. */
let previousImage: ClusterImage | undefined;
let installed = false;
let uninstalled = false;
/** The user the journeys signed up; later suites broadcast as them. */
let member: { user: SiwfUser; msaId: string } | undefined;

/**
 * The release's values: the suites' base, the receiver opened as a webhook destination; the components run
 * `componentImage` (the devchain stays on this checkout's image, so that an upgrade leaves it alone).
 */
function installValues(podCidr: string, componentImage: ClusterImage): object {
  const base = baseValues(image, release.namespace);
  return {
    ...base,
    image: { ...base.image, tag: componentImage.tag },
    secrets: { values: { ...base.secrets.values, WEBHOOK_SECRET } },
    // The components refuse private destinations unless named; the workers' NetworkPolicy admits the pods' range.
    outbound: { allowedDestinations: [receiver.host] },
    networkPolicy: { egress: { webhooks: { cidrs: [podCidr] } } },
    account: {
      config: { SIWF_V2_URI_VALIDATION: LOGIN_URI, WEBHOOK_BASE_URL: receiver.inCluster('/account') },
    },
    contentPublishing: {
      config: { WEBHOOK_BASE_URL: receiver.inCluster('/content-publishing'), BATCH_INTERVAL_SECONDS: '2' },
    },
  };
}

/** The user to post as: the one the journeys signed up, or a new one when that suite did not run. */
async function poster(): Promise<string> {
  if (!member) {
    const { user, referenceId } = await gateway.signUp(`poster${randomBytes(3).toString('hex')}`);
    const webhook = await receiver.notificationOf(ACCOUNT_WEBHOOKS, referenceId, WEBHOOK_SECRET);
    member = { user, msaId: String(webhook.body.msaId) };
  }
  return member.msaId;
}

/** Posts broadcasts `<tag> #<from>` … `#<from + count - 1>`; resolves with their referenceIds (all must be 202). */
async function postNumbered(tag: string, from: number, count: number): Promise<string[]> {
  const msaId = await poster();
  const published = new Date().toISOString();
  return eachLimited(
    Array.from({ length: count }, (_, index) => from + index),
    8,
    async (number) => {
      const answer = await gateway.broadcast(msaId, { content: `${tag} #${number}`, published });
      if (answer.status !== 202)
        throw new Error(`broadcast ${number}: ${answer.status} ${JSON.stringify(answer.body)}`);
      return answer.body.referenceId as string;
    },
  );
}

/** The highest block any content-watcher worker has scanned (the scanning one is the Lease's holder). */
async function scannedBlock(): Promise<number> {
  const pods = await release.pods(componentOf('content-watcher', 'worker'));
  const blocks = await Promise.all(
    pods.map((pod) =>
      podMetric(kube, release.namespace, pod, portOf('content-watcher', 'worker'), 'watcher_scanner_block').catch(
        () => 0,
      ),
    ),
  );
  return Math.max(0, ...blocks);
}

/**
 * The replicas of a worker that say they lead its loop (leader_is_leader 1), by pod name; a replica that does not
 * answer (starting, or stopped) counts as not leading.
 */
async function leadersOf(service: Service): Promise<string[]> {
  // A pod being deleted is left out: through the API server's proxy it may hang until the limit instead of refusing.
  const pods = (await release.pods(componentOf(service, 'worker'))).filter((pod) => !pod.metadata.deletionTimestamp);
  const lease = LEADER_LOOPS[service];
  const flags = await Promise.all(
    pods.map((pod) =>
      podMetric(kube, release.namespace, pod, portOf(service, 'worker'), 'leader_is_leader', `lease="${lease}"`).catch(
        () => 0,
      ),
    ),
  );
  return pods.filter((_, index) => flags[index] === 1).map((pod) => pod.metadata.name);
}

beforeAll(async () => {
  const started = Date.now();
  await cryptoWaitReady();
  ({ image, kube, release, receiver } = await prepareSuiteRelease('fg-e2e'));
  say(
    `cluster setup: cluster up, ${image.repository}:${image.tag} built and loaded, namespace ${release.namespace} ` +
      `(restricted) with its webhook receiver in ${seconds(started)} s`,
  );
}, 45 * 60_000);

afterAll(async () => {
  await gateway?.close();
  await removeSuiteRelease(release, installed && !uninstalled);
  if (previousImage) await untag(previousImage);
  kube?.close();
}, 300_000);

describe('helm install of the last release, then upgrade to this checkout, from an OCI registry', () => {
  let registry: ChartRegistry | undefined;
  let previous: PreviousRelease;
  afterAll(async () => registry?.stop(), 60_000);

  test("the last release (its tag's chart and image) from a registry in the cluster, with the in-cluster devchain and Redis and IPFS on volumes: every pod Ready, no restart, Leases held", async () => {
    const nodes = await kube.get<List<{ spec: { podCIDR?: string } }>>('/api/v1/nodes');
    const podCidr = nodes.items[0]?.spec.podCIDR ?? '10.244.0.0/16';
    const prepared = Date.now();
    registry = await ChartRegistry.start(release.namespace);
    previous = await buildPreviousRelease(registry);
    previousImage = previous.image;
    say(
      `cluster last release: v${previous.version} (${previous.commit.slice(0, 12)}): image ${previous.image.tag} built, ` +
        `chart pushed to ${previous.chart.reference} (${previous.chart.digest.slice(0, 19)}…) in ${seconds(prepared)} s`,
    );
    const started = Date.now();
    await release.install(installValues(podCidr, previous.image), previous.chart);
    installed = true;
    expect(await chartOfRelease()).toBe(previous.version);
    const pods = await release.allReady(300_000, RELEASE_PODS);
    const readyAfter = seconds(started);
    const restarts = pods.reduce((sum, pod) => sum + restartsOf(pod), 0);
    say(`cluster install: ${pods.length} pods Ready ${readyAfter} s after helm install; restarts ${restarts}`);
    expect(restarts).toBe(0);

    // The volumes are claimed and bound.
    const claims = await kube.get<List<{ metadata: { name: string }; status: { phase: string } }>>(
      `/api/v1/namespaces/${release.namespace}/persistentvolumeclaims`,
    );
    expect(claims.items.map((claim) => `${claim.metadata.name} ${claim.status.phase}`).sort()).toEqual([
      `data-${RELEASE}-ipfs-0 Bound`,
      `data-${RELEASE}-redis-0 Bound`,
    ]);
    // Lease writes are accepted by the API server: each loop's Lease is held by one of its worker's pods.
    for (const service of SERVICES) {
      const workers = pods.filter(
        (pod) => pod.metadata.labels?.['app.kubernetes.io/component'] === componentOf(service, 'worker'),
      );
      await waitUntil(
        async () => {
          const holder = (await leaseOf(kube, release.namespace, LEASES[service]))?.spec.holderIdentity;
          return workers.some((pod) => pod.metadata.name === holder);
        },
        60_000,
        `Lease ${LEASES[service]} held by a ${service} worker`,
      );
    }
    gateway = await connectToRelease(release);
  }, 2_400_000);

  test("upgraded to this checkout's chart (make chart, pushed to the registry) and image while broadcasts, sign-ups and look-ups arrive: no failed request, each finalized once", async () => {
    const current = await registry!.publish();
    const devchain = (await release.pods('devchain'))[0]!;
    const msaId = await poster();
    const tag = `from-${previous.version}-${release.namespace}`;
    const traffic = steadyTraffic(tag, msaId);
    const signUps: Promise<string>[] = [];
    let upgrading = true;
    const signingUp = (async () => {
      while (upgrading) {
        const signUp = gateway
          .signUp(`upgrade${randomBytes(3).toString('hex')}`)
          .then((signedUp) => signedUp.referenceId);
        signUps.push(signUp);
        await signUp.catch(() => undefined);
      }
    })();
    await waitUntil(async () => traffic.answered() >= 20, 60_000, 'the first requests answered');
    const upgrade = await release.upgrade({ image: { tag: image.tag } }, current).finally(() => (upgrading = false));
    await signingUp;
    const pods = await release.allReady(300_000, RELEASE_PODS);
    const summary = await traffic.stop();
    const signedUp = await Promise.allSettled(signUps);
    const refused = signedUp
      .filter((outcome) => outcome.status === 'rejected')
      .map((outcome) => String(outcome.reason));
    const records = await gateway.settled(summary.posted, 300_000);
    const notFinalizedOnce = records.filter(
      (record) => record.history.filter((step) => step.state === 'finalized').length !== 1,
    ).length;
    const referenceIds = signedUp.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
    for (const referenceId of referenceIds)
      expect((await receiver.notificationOf(ACCOUNT_WEBHOOKS, referenceId, WEBHOOK_SECRET)).body).toMatchObject({
        transactionType: 'SIWF_SIGNUP',
        status: 'SUCCESS',
      });
    say(
      `cluster upgrade from v${previous.version}: to ${current.reference} ${current.version} and ${image.tag} in ` +
        `${upgrade.seconds.toFixed(1)} s while ${summary.broadcasts} broadcasts, ${summary.lookups} look-ups and ` +
        `${signUps.length} sign-ups arrived; failed ${summary.failed + refused.length}; broadcasts not finalized once ` +
        `${notFinalizedOnce}; sign-ups notified ${referenceIds.length}` +
        (summary.failures.length + refused.length
          ? ` (first: ${[...summary.failures, ...refused].slice(0, 5).join('; ')})`
          : ''),
    );
    expect([...summary.failures, ...refused]).toEqual([]);
    expect(notFinalizedOnce).toBe(0);
    expect(await chartOfRelease()).toBe(current.version);
    for (const pod of pods) {
      if (pod.metadata.name.startsWith(`${FULLNAME}-`))
        expect(`${pod.metadata.name} ${pod.spec.containers[0]!.image}`).toBe(
          `${pod.metadata.name} ${image.repository}:${image.tag}`,
        );
      expect(`${pod.metadata.name} ${restartsOf(pod)}`).toBe(`${pod.metadata.name} 0`);
    }
    expect(pods.map((pod) => pod.metadata.uid)).toContain(devchain.metadata.uid);
    expect(summary.broadcasts).toBeGreaterThan(20);
    expect(referenceIds.length).toBeGreaterThan(0);
  }, 1_200_000);
});

/** The chart version of the release's current revision (`helm get metadata`). */
async function chartOfRelease(): Promise<string> {
  const metadata = JSON.parse((await release.helm(['get', 'metadata', RELEASE, '-o', 'json'])).output) as {
    version: string;
  };
  return metadata.version;
}

describe('helm test', () => {
  test("the chart's test pods: each api ready, a request through each", async () => {
    const run = await release.helm(['test', RELEASE, '--logs', '--timeout', '4m']);
    const phases = [...run.output.matchAll(/^Phase:\s+(\w+)/gm)].map((match) => match[1]);
    say(
      `cluster helm test: ${phases.length} test pods, ${phases.filter((p) => p === 'Succeeded').length} passed, in ${run.seconds.toFixed(1)} s`,
    );
    expect(phases).toEqual(['Succeeded', 'Succeeded', 'Succeeded']);
    for (const path of [
      '/v1/frequency/blockinfo: 200',
      '/v1/requests/helm-test-unknown-request: 404',
      '/v1/webhooks: 200',
    ])
      expect(run.output).toContain(path);
  }, 300_000);
});

describe('journeys through the Services', () => {
  test('a SIWF sign-up: the SIWF_SIGNUP webhook at the in-cluster receiver, then the account is found', async () => {
    const started = Date.now();
    const handle = `cluster${randomBytes(3).toString('hex')}`;
    const { user, referenceId } = await gateway.signUp(handle);
    const webhook = await receiver.notificationOf(ACCOUNT_WEBHOOKS, referenceId, WEBHOOK_SECRET);
    expect(webhook.body).toMatchObject({
      transactionType: 'SIWF_SIGNUP',
      status: 'SUCCESS',
      providerId: '1',
      referenceId,
      accountId: user.address,
    });
    expect(webhook.body.handle).toMatch(new RegExp(`^${handle}\\.\\d+$`));
    const msaId = String(webhook.body.msaId);
    const account = await callJson(gateway.account, 'GET', `/v1/accounts/account/${user.address}`);
    expect(account).toMatchObject({ status: 200, body: { msaId } });
    member = { user, msaId };
    say(
      `cluster journey: sign-up notified in ${seconds(started)} s (MSA ${msaId}, handle ${webhook.body.handle as string})`,
    );
  }, 180_000);

  test('their broadcast with an uploaded image: finalized, delivered by the content watcher, the Note in IPFS as posted', async () => {
    const registered = await callJson(gateway.contentWatcher, 'POST', '/v1/webhooks', {
      url: receiver.inCluster(WATCHER_PATH),
      announcementTypes: ['broadcast'],
    });
    expect(registered.status).toBe(201);
    const started = Date.now();
    const picture = new Uint8Array(4096).map((_, index) =>
      index < 4 ? [0x89, 0x50, 0x4e, 0x47][index]! : index % 251,
    );
    const cid = await gateway.uploadImage(picture);
    const content = {
      content: `hello from ${release.namespace}`,
      published: new Date().toISOString(),
      assets: [{ name: 'picture', references: [{ referenceId: cid, width: 64, height: 64 }] }],
    };
    const msaId = await poster();
    const answer = await gateway.broadcast(msaId, content);
    expect(answer.status).toBe(202);
    const referenceId = answer.body.referenceId as string;
    const [record] = await gateway.settled([referenceId], 120_000);
    expect(record!.state).toBe('finalized');
    const notified = await receiver.notificationOf(CONTENT_WEBHOOKS, referenceId, WEBHOOK_SECRET);
    expect(notified.body).toMatchObject({ referenceId, status: 'SUCCESS', providerId: '1' });

    let delivery: Awaited<ReturnType<WebhookReceiver['at']>>[number] | undefined;
    await waitUntil(
      async () => {
        delivery = (await receiver.at(WATCHER_PATH)).find(
          (found) => (found.body.announcement as { fromId?: string } | undefined)?.fromId === msaId,
        );
        return delivery !== undefined;
      },
      120_000,
      'the content watcher delivering the broadcast',
    );
    expect(verifyWebhook(WEBHOOK_SECRET, delivery!.headers, delivery!.raw)).toBe(true);
    const announcement = delivery!.body.announcement as { announcementType: number; url: string; contentHash: string };
    expect(announcement.announcementType).toBe(2);
    const note = await gateway.noteAt(announcement.url);
    expect(note).toMatchObject({ type: 'Note', content: content.content, published: content.published });
    expect(JSON.stringify(note.attachment)).toContain(cid);
    // The picture itself, read back through the IPFS gateway Service.
    const stored = new Uint8Array(await (await fetch(`${gateway.ipfsGateway}/ipfs/${cid}`)).arrayBuffer());
    expect(Buffer.from(stored).equals(Buffer.from(picture))).toBe(true);
    say(`cluster journey: broadcast with an image finalized and delivered in ${seconds(started)} s`);
  }, 300_000);

  test("a handle change: the CHANGE_HANDLE webhook, then the user's handle is the new one", async () => {
    expect(member).toBeDefined();
    const started = Date.now();
    const handle = `moved${randomBytes(3).toString('hex')}`;
    const answer = await gateway.handleChange(member!.user, handle);
    expect(answer.status).toBe(200);
    const webhook = await receiver.notificationOf(ACCOUNT_WEBHOOKS, answer.body.referenceId as string, WEBHOOK_SECRET);
    expect(webhook.body).toMatchObject({ transactionType: 'CHANGE_HANDLE', status: 'SUCCESS', msaId: member!.msaId });
    const current = await callJson(gateway.account, 'GET', `/v1/handles/${member!.msaId}`);
    expect(current.body.base_handle).toBe(handle);
    say(`cluster journey: handle changed to ${webhook.body.handle as string} in ${seconds(started)} s`);
  }, 180_000);
});

describe('leader election on real Leases', () => {
  test('three replicas of each worker: one holder per Lease; the holders deleted → others hold them within the lease duration; nothing processed twice', async () => {
    const replicas = { worker: { replicas: 3 } };
    await release.upgrade(Object.fromEntries(SERVICES.map((service) => [SERVICE_KEYS[service], replicas])));
    for (const service of SERVICES) await release.allReady(300_000, 3, componentOf(service, 'worker'));

    // Exactly one holder per Lease: the Lease names a replica, and that replica alone says it leads.
    const holders = {} as Record<Service, string>;
    for (const service of SERVICES) {
      await waitUntil(
        async () => {
          const leaders = await leadersOf(service);
          const holder = (await leaseOf(kube, release.namespace, LEASES[service]))?.spec.holderIdentity;
          holders[service] = leaders[0] ?? '';
          return leaders.length === 1 && leaders[0] === holder;
        },
        60_000,
        `one leader of ${LEASES[service]}`,
      );
    }
    const leaseSeconds = (await leaseOf(kube, release.namespace, LEASES.account))!.spec.leaseDurationSeconds!;

    // Work before, during and after the hand-over: broadcasts (the publishing tracker, the watcher's scanner) and
    // sign-ups (the account tracker).
    const tag = `handover-${release.namespace}`;
    const before = await postNumbered(tag, 0, 20);
    const signUps = [await gateway.signUp(`before${randomBytes(3).toString('hex')}`)];
    const deletedAt = Date.now();
    await Promise.all(SERVICES.map((service) => release.deletePod(holders[service], 'graceful')));
    const during = Promise.all([
      postNumbered(tag, 20, 20),
      gateway.signUp(`during${randomBytes(3).toString('hex')}`).then((signUp) => signUps.push(signUp)),
    ]);
    // The hand-over, from the Lease itself: when the new holder acquired it, counted from the deletion.
    const handover = await Promise.all(
      SERVICES.map(async (service) => {
        let acquired = 0;
        let holder = '';
        await waitUntil(
          async () => {
            const lease = await leaseOf(kube, release.namespace, LEASES[service]);
            holder = lease?.spec.holderIdentity ?? '';
            acquired = Date.parse(lease?.spec.acquireTime ?? '');
            return Boolean(holder) && holder !== holders[service] && acquired > 0;
          },
          (leaseSeconds + 30) * 1000,
          `another ${service} worker holding ${LEASES[service]}`,
        );
        // That replica, and it alone, says it leads.
        await waitUntil(
          async () => JSON.stringify(await leadersOf(service)) === JSON.stringify([holder]),
          60_000,
          `${holder} alone leading ${LEASES[service]}`,
        );
        return (acquired - deletedAt) / 1000;
      }),
    );
    const [after] = await during;

    const ids = [...before, ...after];
    const records = await gateway.settled(ids, 300_000);
    const { lost, duplicated } = await deliveredOnce({
      receiver,
      gateway,
      path: WATCHER_PATH,
      tag,
      count: ids.length,
      timeoutMs: 300_000,
      scannedBlock,
    });
    for (const signUp of signUps) await receiver.notificationOf(ACCOUNT_WEBHOOKS, signUp.referenceId, WEBHOOK_SECRET);
    say(
      `cluster leader election: hand-over ${SERVICES.map((service, index) => `${service} ${handover[index]!.toFixed(1)} s`).join(', ')} ` +
        `(lease ${leaseSeconds} s); ${ids.length} broadcasts around it: ${records.filter((r) => r.state === 'finalized').length} finalized, ` +
        `lost ${lost}, delivered twice ${duplicated}; ${signUps.length} sign-ups notified once`,
    );
    for (const seconds of handover) expect(seconds).toBeLessThanOrEqual(leaseSeconds);
    expect(records.map((record) => record.state)).toEqual(ids.map(() => 'finalized'));
    for (const record of records) expect(record.history.filter((step) => step.state === 'finalized')).toHaveLength(1);
    expect({ lost, duplicated }).toEqual({ lost: 0, duplicated: 0 });
    for (const service of SERVICES) expect(await leadersOf(service)).toHaveLength(1);
  }, 900_000);
});

describe('a worker killed under load', () => {
  test('a content-publishing worker killed with --grace-period=0 --force in the middle of 2,000 broadcasts: all finalized exactly once', async () => {
    const total = 2000;
    const tag = `kill-${release.namespace}`;
    const msaId = await poster();
    const published = new Date().toISOString();
    // The tracker's leader, so that the Lease must expire before another replica tracks the transactions.
    const victim = (await leaseOf(kube, release.namespace, LEASES['content-publishing']))!.spec.holderIdentity!;
    let accepted = 0;
    let killedAt = 0;
    const refused: string[] = [];
    const started = Date.now();
    const ids = await eachLimited(
      Array.from({ length: total }, (_, index) => index),
      16,
      async (number) => {
        const answer = await gateway.broadcast(msaId, { content: `${tag} #${number}`, published });
        if (answer.status !== 202) refused.push(`#${number}: ${answer.status} ${JSON.stringify(answer.body)}`);
        if (++accepted === total / 2) {
          killedAt = Date.now();
          await kubectl([
            '-n',
            release.namespace,
            'delete',
            'pod',
            victim,
            '--grace-period=0',
            '--force',
            '--wait=false',
          ]);
        }
        return answer.body.referenceId as string;
      },
    );
    const postedIn = seconds(started);
    expect(refused).toEqual([]);
    expect(killedAt).toBeGreaterThan(0);
    let takenOver = 0;
    await waitUntil(
      async () => {
        const holder = (await leaseOf(kube, release.namespace, LEASES['content-publishing']))?.spec.holderIdentity;
        if (holder && holder !== victim) takenOver = Date.now();
        return takenOver > 0;
      },
      120_000,
      'another content-publishing worker tracking transactions',
    );
    const records = await gateway.settled(ids, 600_000);
    const finalizedIn = seconds(started);
    const { lost, duplicated } = await deliveredOnce({
      receiver,
      gateway,
      path: WATCHER_PATH,
      tag,
      count: total,
      timeoutMs: 600_000,
      scannedBlock,
    });
    const finalized = records.filter((record) => record.state === 'finalized').length;
    say(
      `cluster worker kill: ${total} broadcasts posted in ${postedIn} s, ${victim} killed at #${total / 2} ` +
        `(its Lease taken over ${((takenOver - killedAt) / 1000).toFixed(1)} s later), ${finalized} finalized in ${finalizedIn} s; ` +
        `lost/duplicated ${lost}/${duplicated}`,
    );
    expect(finalized).toBe(total);
    for (const record of records) expect(record.history.filter((step) => step.state === 'finalized')).toHaveLength(1);
    expect({ lost, duplicated }).toEqual({ lost: 0, duplicated: 0 });
  }, 1_200_000);
});

/** A steady stream of broadcasts and look-ups through the Services, counted; any error or unexpected status fails. */
function steadyTraffic(tag: string, msaId: string) {
  let running = true;
  const counts = { broadcasts: 0, lookups: 0, failed: 0, retried: 0 };
  const failures: string[] = [];
  const posted: string[] = [];
  const published = new Date().toISOString();
  /**
   * One request; a look-up (idempotent) is sent again once when its kept-alive connection was closed before any
   * answer, as RFC 9110 (9.2.2) lets a client do and browsers and Ingress controllers do: a stopping pod closes its
   * idle connections, and one the client picked at that instant is reset. A broadcast is never sent twice.
   */
  const attempt = async (what: string, expected: number, request: () => Promise<JsonAnswer>, idempotent = false) => {
    for (let tries = 1; ; tries++) {
      try {
        const answer = await request();
        if (answer.status === expected) return answer;
        failures.push(`${what}: ${answer.status} ${JSON.stringify(answer.body ?? null).slice(0, 200)}`);
      } catch (error) {
        const cause = (error as Error).cause as NodeJS.ErrnoException | undefined;
        if (idempotent && tries === 1 && ['ECONNRESET', 'UND_ERR_SOCKET'].includes(cause?.code ?? '')) {
          counts.retried++;
          continue;
        }
        failures.push(`${what}: ${String(cause ?? error)}`);
      }
      counts.failed++;
      return undefined;
    }
  };
  const pause = () => new Promise((resolve) => setTimeout(resolve, 50));
  const lanes = [
    async () => {
      for (let number = 0; running; number++) {
        const answer = await attempt(`broadcast #${number}`, 202, () =>
          gateway.broadcast(msaId, { content: `${tag} #${number}`, published }),
        );
        counts.broadcasts++;
        if (answer) posted.push(answer.body.referenceId as string);
        await pause();
      }
    },
    async () => {
      while (running) {
        const last = posted.at(-1);
        if (last)
          await attempt(
            'GET request',
            200,
            () => callJson(gateway.contentPublishing, 'GET', `/v1/requests/${last}`),
            true,
          );
        await attempt('GET account', 200, () => callJson(gateway.account, 'GET', `/v1/accounts/${msaId}`), true);
        await attempt('GET webhooks', 200, () => callJson(gateway.contentWatcher, 'GET', '/v1/webhooks'), true);
        counts.lookups += last ? 3 : 2;
        await pause();
      }
    },
  ];
  const done = Promise.all(lanes.map((lane) => lane()));
  return {
    answered: () => counts.broadcasts + counts.lookups - counts.failed,
    stop: async () => {
      running = false;
      await done;
      return { ...counts, failures, posted };
    },
  };
}

const deploymentsPath = () => `/apis/apps/v1/namespaces/${release.namespace}/deployments`;

describe('autoscaling and rollback', () => {
  beforeAll(async () => {
    // Back to one replica of each worker (the leader election suite ran three).
    const replicas = { worker: { replicas: 1 } };
    await release.upgrade(Object.fromEntries(SERVICES.map((service) => [SERVICE_KEYS[service], replicas])));
    await release.allReady(300_000, RELEASE_PODS);
  }, 600_000);

  test("autoscaling turned on in an upgrade keeps each api's replicas; helm rollback takes it back", async () => {
    const apis = SERVICES.map((service) => `${FULLNAME}-${componentOf(service, 'api')}`);
    const apiPods = async () =>
      (await Promise.all(SERVICES.map((service) => release.pods(componentOf(service, 'api')))))
        .flat()
        .map((pod) => pod.metadata.uid)
        .sort();
    const podsBefore = await apiPods();
    // Watches every api Deployment's count while the upgrade applies, and a while after.
    const fewest = Object.fromEntries(apis.map((name) => [name, Number.POSITIVE_INFINITY]));
    let watching = true;
    const watch = (async () => {
      while (watching) {
        const list = await kube.get<List<Deployment>>(deploymentsPath());
        for (const deployment of list.items)
          if (deployment.metadata.name in fewest)
            fewest[deployment.metadata.name] = Math.min(
              fewest[deployment.metadata.name]!,
              deployment.spec.replicas ?? 1,
            );
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    const autoscaled = { api: { autoscaling: { enabled: true } } };
    const upgrade = await release.upgrade(
      Object.fromEntries(SERVICES.map((service) => [SERVICE_KEYS[service], autoscaled])),
    );
    await holdsFor(5_000, async () => {
      for (const name of apis) expect(`${name} ${fewest[name]}`).toBe(`${name} 2`);
    });
    watching = false;
    await watch;
    const hpas = await kube.get<List<{ metadata: { name: string } }>>(
      `/apis/autoscaling/v2/namespaces/${release.namespace}/horizontalpodautoscalers`,
    );
    expect(hpas.items.map((hpa) => hpa.metadata.name).sort()).toEqual(apis.sort());
    expect(await apiPods()).toEqual(podsBefore);

    const rollback = await release.helm(['rollback', RELEASE, '--wait', '--timeout', '5m']);
    const after = await kube.get<List<{ metadata: { name: string } }>>(
      `/apis/autoscaling/v2/namespaces/${release.namespace}/horizontalpodautoscalers`,
    );
    expect(after.items).toEqual([]);
    const deployments = await kube.get<List<Deployment>>(deploymentsPath());
    for (const name of apis)
      expect(`${name} ${deployments.items.find((d) => d.metadata.name === name)?.spec.replicas}`).toBe(`${name} 2`);
    await release.allReady(300_000, RELEASE_PODS);
    expect(await apiPods()).toEqual(podsBefore);
    say(
      `cluster autoscaling: upgrade in ${upgrade.seconds.toFixed(1)} s, fewest api replicas ` +
        `${apis.map((name) => fewest[name]).join('/')} (of 2), no api pod replaced; ` +
        `rollback in ${rollback.seconds.toFixed(1)} s: HPAs gone, replicas 2`,
    );
  }, 600_000);
});

describe('secrets from a secret store', () => {
  let operator: ExternalSecretsOperator | undefined;
  afterAll(async () => operator?.stop(), 120_000);

  test("an upgrade moves the gateway's keys to a SecretStore (External Secrets Operator); a key rotated there reaches the pods on a rollout restart", async () => {
    const started = Date.now();
    operator = await ExternalSecretsOperator.start(release.namespace);
    const provider = baseValues(image, release.namespace).secrets.values.PROVIDER_ACCOUNT_SEED_PHRASE!;
    const store = 'gateway-keys';
    await operator.store(store, { 'gateway/provider': provider, 'gateway/webhook': WEBHOOK_SECRET });
    const made = `${FULLNAME}-store`;
    const upgrade = await release.upgrade({
      secrets: {
        externalSecret: {
          enabled: true,
          storeRef: { name: store },
          refreshInterval: '2s',
          remoteKeys: { PROVIDER_ACCOUNT_SEED_PHRASE: 'gateway/provider', WEBHOOK_SECRET: 'gateway/webhook' },
        },
      },
    });
    await release.allReady(300_000, RELEASE_PODS);
    const secretOf = async () => {
      const secret = await kube.get<{
        data?: Record<string, string>;
        metadata: { ownerReferences?: { kind: string }[] };
      }>(`/api/v1/namespaces/${release.namespace}/secrets/${made}`);
      const value = (key: string) => Buffer.from(secret.data?.[key] ?? '', 'base64').toString();
      return { owners: secret.metadata.ownerReferences?.map((owner) => owner.kind), value };
    };
    expect((await secretOf()).owners).toEqual(['ExternalSecret']);
    // Every component that signs or delivers webhooks reads its keys from the operator's Secret, none from values.
    type EnvOf = { name: string; valueFrom?: { secretKeyRef?: { name: string } } };
    const deployments =
      await kube.get<List<{ spec: { template: { spec: { containers: { env?: EnvOf[] }[] } } } }>>(deploymentsPath());
    const references = deployments.items.flatMap((deployment) =>
      (deployment.spec.template.spec.containers[0]!.env ?? [])
        .filter((env) => env.name === 'PROVIDER_ACCOUNT_SEED_PHRASE' || env.name === 'WEBHOOK_SECRET')
        .map((env) => `${env.name} ${env.valueFrom?.secretKeyRef?.name}`),
    );
    expect(references.length).toBeGreaterThanOrEqual(5);
    expect(new Set(references.map((reference) => reference.split(' ')[1]))).toEqual(new Set([made]));

    // Sign-up and broadcast with the keys from the store.
    const { referenceId } = await gateway.signUp(`stored${randomBytes(3).toString('hex')}`);
    await receiver.notificationOf(ACCOUNT_WEBHOOKS, referenceId, WEBHOOK_SECRET);
    const [broadcast] = await postNumbered('stored keys', 1, 1);
    await receiver.notificationOf(CONTENT_WEBHOOKS, broadcast!, WEBHOOK_SECRET);

    // Rotation: the store's value changes, the operator updates the Secret, and a rollout restart hands it to the pods.
    const rotated = randomBytes(24).toString('hex');
    await operator.store(store, { 'gateway/provider': provider, 'gateway/webhook': rotated });
    const rotating = Date.now();
    await waitUntil(
      async () => (await secretOf()).value('WEBHOOK_SECRET') === rotated,
      60_000,
      'the rotated key in the Secret',
    );
    const inSecret = seconds(rotating);
    const components = SERVICES.flatMap((service) => [componentOf(service, 'api'), componentOf(service, 'worker')]);
    // docs/chart.md's command: every Deployment of the release but the devchain's.
    const restart = `app.kubernetes.io/instance=${RELEASE},app.kubernetes.io/component!=devchain`;
    await kubectl(['-n', release.namespace, 'rollout', 'restart', 'deployment', '-l', restart]);
    for (const component of components)
      await kubectl([
        '-n',
        release.namespace,
        'rollout',
        'status',
        `deployment/${FULLNAME}-${component}`,
        '--timeout=300s',
      ]);
    await release.allReady(300_000, RELEASE_PODS);
    const restarted = seconds(rotating);
    const after = await gateway.signUp(`rotated${randomBytes(3).toString('hex')}`);
    const signed = await receiver.notificationOf(ACCOUNT_WEBHOOKS, after.referenceId, rotated);
    expect(verifyWebhook(WEBHOOK_SECRET, signed.headers, signed.raw)).toBe(false);
    say(
      `cluster secret store: operator up and keys moved to the store in ${seconds(started)} s (upgrade ` +
        `${upgrade.seconds.toFixed(1)} s); sign-up and broadcast signed with the stored key; rotated key in the Secret ` +
        `after ${inSecret} s, in every pod after the rollout restart at ${restarted} s`,
    );
  }, 1_800_000);
});

describe('the readiness controller', () => {
  test("the devchain scaled to 0: every chain user's /readyz 503 and a DependencyDown Event on its pod; back: Ready again, no restart", async () => {
    const users = (await Promise.all(CHAIN_USERS.map((component) => release.pods(component)))).flat();
    const others = await release.pods(componentOf('content-watcher', 'api'));
    const portOfPod = (pod: Pod) => {
      const [service, role] = /^(.*)-(api|worker)$/
        .exec(pod.metadata.labels!['app.kubernetes.io/component']!)!
        .slice(1) as [Service, 'api' | 'worker'];
      return portOf(service, role);
    };
    const readyz = async (pod: Pod) => {
      const answer = await kube.toPod(release.namespace, pod.metadata.name, portOfPod(pod), '/readyz');
      return { status: answer.status, body: JSON.parse(answer.body) as { checks: Record<string, { status: string }> } };
    };
    // The components', Redis's and IPFS's pods stay the same pods throughout (the devchain's is a new one).
    const restarts = async () =>
      Object.fromEntries(
        (await release.pods())
          .filter((pod) => pod.metadata.labels?.['app.kubernetes.io/component'] !== 'devchain')
          .map((pod) => [pod.metadata.name, restartsOf(pod)]),
      );
    const restartsBefore = await restarts();
    // The suite's own chain client would only complain while the devchain is away; nothing after needs it.
    await gateway.close();
    for (const pod of users)
      expect(`${pod.metadata.name} ${(await readyz(pod)).status}`).toBe(`${pod.metadata.name} 200`);

    const devchain = `${FULLNAME}-devchain`;
    const wentAt = Date.now();
    await release.scale(devchain, 0);
    await waitUntil(
      async () => {
        const answers = await Promise.all(users.map(readyz));
        return answers.every((answer) => answer.status === 503 && answer.body.checks.chain?.status === 'down');
      },
      60_000,
      'every chain user answering 503 on /readyz',
    );
    const unreadyAfter = seconds(wentAt);
    for (const pod of others)
      expect(`${pod.metadata.name} ${(await readyz(pod)).status}`).toBe(`${pod.metadata.name} 200`);
    await waitUntil(
      async () => {
        const events = await kube.get<List<KubeEvent>>(
          `/api/v1/namespaces/${release.namespace}/events?fieldSelector=${encodeURIComponent('reason=DependencyDown')}`,
        );
        const told = new Set(
          events.items
            .filter(
              (event) =>
                event.message.includes('chain') &&
                Date.parse(event.eventTime ?? event.lastTimestamp ?? '') >= wentAt - 1000,
            )
            .map((event) => event.involvedObject.name),
        );
        return users.every((pod) => told.has(pod.metadata.name));
      },
      60_000,
      'a DependencyDown Event on every chain user',
    );
    // The kubelet's readiness probe sees it too: the pods leave their Services.
    await waitUntil(
      async () => {
        const now = (await Promise.all(CHAIN_USERS.map((component) => release.pods(component)))).flat();
        return now.every((pod) => !podReady(pod));
      },
      60_000,
      'every chain user NotReady',
    );
    const notReadyAfter = seconds(wentAt);

    const backAt = Date.now();
    await release.scale(devchain, 1);
    await waitUntil(
      async () => (await Promise.all(users.map(readyz))).every((answer) => answer.status === 200),
      180_000,
      'every chain user ready again',
    );
    const readyAfter = seconds(backAt);
    await release.allReady(180_000, RELEASE_PODS);
    const podsReadyAfter = seconds(backAt);
    const restartsAfter = await restarts();
    say(
      `cluster readiness: ${users.length} chain users answered 503 ${unreadyAfter} s after the devchain went ` +
        `(DependencyDown Events on each, NotReady at ${notReadyAfter} s); /readyz 200 ${readyAfter} s and pods Ready ` +
        `${podsReadyAfter} s after it came back; restarts ${Object.values(restartsAfter).reduce((a, b) => a + b, 0)}`,
    );
    expect(restartsAfter).toEqual(restartsBefore);
  }, 600_000);
});

describe('helm uninstall', () => {
  test('leaves only what docs/chart.md says it leaves', async () => {
    // The suite's chain client follows the devchain through a port-forward, which ends with its pod.
    await gateway?.close();
    await release.helm(['uninstall', RELEASE, '--wait', '--timeout', '5m']);
    uninstalled = true;
    await waitUntil(async () => (await release.pods()).length === 0, 180_000, "the release's pods gone");
    const kinds = (await kubectl(['api-resources', '--verbs=list', '--namespaced', '-o', 'name']))
      .split('\n')
      .filter((kind) => kind && !kind.startsWith('events'));
    /** What is in the namespace but the suite's own receiver and what every namespace has (events aside). */
    const leftOver = async () => {
      const listed = JSON.parse(
        await kubectl(['-n', release.namespace, 'get', kinds.join(','), '-o', 'json']),
      ) as List<{
        kind: string;
        metadata: { name: string; labels?: Record<string, string> };
      }>;
      return listed.items
        .filter((object) => object.metadata.labels?.['app.kubernetes.io/part-of'] !== 'frequency-gateway-e2e')
        .filter((object) => object.metadata.labels?.['kubernetes.io/service-name'] !== 'webhook-receiver')
        .map((object) => `${object.kind} ${object.metadata.name}`)
        .filter(
          (named) =>
            !['Endpoints webhook-receiver', 'ConfigMap kube-root-ca.crt', 'ServiceAccount default'].includes(named),
        )
        .sort();
    };
    // docs/chart.md's list (Uninstall): volumes, generated Secrets, the workers' Leases, the last helm test's Pods.
    const expected = [
      ...Object.values(LEASES).map((lease) => `Lease ${lease}`),
      ...SERVICES.map((service) => `Pod ${FULLNAME}-${componentOf(service, 'api')}-test`),
      `PersistentVolumeClaim data-${RELEASE}-ipfs-0`,
      `PersistentVolumeClaim data-${RELEASE}-redis-0`,
      `Secret ${FULLNAME}-generated`,
      `Secret ${RELEASE}-redis-generated`,
    ].sort();
    // The garbage collector removes what the workloads owned (ReplicaSets, revisions) after them.
    let left: string[] = [];
    await waitUntil(
      async () => JSON.stringify((left = await leftOver())) === JSON.stringify(expected),
      60_000,
      () => `only ${expected.join(', ')} left; now: ${left.join(', ')}`,
    ).catch(() => undefined);
    say(`cluster uninstall: left ${left.join(', ')}`);
    expect(left).toEqual(expected);
  }, 300_000);
});
