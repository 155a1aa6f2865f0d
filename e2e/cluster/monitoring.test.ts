// The chart's ServiceMonitors scraped by a real Prometheus (prometheus-operator, dev/cluster/monitoring) in the
// local cluster: the chart installed with `metrics.serviceMonitor.enabled=true` in a namespace of its own, every
// component's target must be `up`, and after two broadcasts the gateway's own metrics must say what happened:
// requests accepted, queue depth by queue and state, webhooks delivered (to a receiver Pod in the namespace).
// Prometheus loads the chart's alerting rules (its PrometheusRule); the devchain scaled to 0 fires
// GatewayChainUnreachable within its `for` and one evaluation interval, and scaling it back resolves it (printed).
// Needs: the local cluster (make cluster, root); builds and starts the monitoring stack when it is missing.
import { randomBytes } from 'node:crypto';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { waitUntil, webhookReceiverProgram } from '@frequency-gateway/devstack';
import { GATEWAY_COMPONENTS } from '@frequency-gateway/devstack/gateway';
import {
  createNamespace,
  deleteNamespace,
  fetchText,
  kubectl,
  portForward,
  REPOSITORY_ROOT,
  requireLocalCluster,
  runCommand,
  type PortForward,
} from '../src/cluster/localCluster.js';
import {
  activeAlerts,
  activeTargets,
  alertingRules,
  query,
  scalar,
  type Alert,
  type Target,
} from '../src/cluster/prometheusApi.js';

const MONITORING_NAMESPACE = process.env.FG_MONITORING_NAMESPACE ?? 'monitoring';
const RELEASE = 'gw';
const FULLNAME = `${RELEASE}-frequency-gateway`;
const COMPONENTS = GATEWAY_COMPONENTS.map(([service, role]) => `${service}-${role}`);
const BROADCASTS = 2;
// The chain alert's `for` in this suite (a value of the chart), and the Prometheus' evaluation interval
// (dev/cluster/monitoring.yaml).
const CHAIN_ALERT_FOR_SECONDS = 30;
const EVALUATION_INTERVAL_SECONDS = 5;
// The image built from this working tree, under a tag of this suite's own (the cluster and dockerd are shared).
const IMAGE_REPOSITORY = 'frequency-gateway';
const IMAGE_TAG = 'fg-observe';

const line = (name: string, value: string) => process.stdout.write(`${name.padEnd(60)} ${value}\n`);

/** The tests' webhook receiver (devstack's, as one program) in a Pod of the namespace: `GET /received` counts. */
const receiverManifest = (namespace: string, program: string) => {
  const labels = { 'app.kubernetes.io/name': 'webhook-receiver' };
  return {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'webhook-receiver', namespace, labels },
        spec: {
          securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [
            {
              name: 'receiver',
              image: `${IMAGE_REPOSITORY}:${IMAGE_TAG}`,
              imagePullPolicy: 'Never',
              command: ['node', '--input-type=module', '-e', program],
              ports: [{ name: 'http', containerPort: 8080 }],
              readinessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 1 },
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ['ALL'] },
              },
            },
          ],
        },
      },
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'webhook-receiver', namespace },
        spec: { selector: labels, ports: [{ name: 'http', port: 8080, targetPort: 'http' }] },
      },
    ],
  };
};

describe('ServiceMonitors scraped by Prometheus in the local cluster', () => {
  let namespace = '';
  const forwards: PortForward[] = [];
  let prometheus = '';

  const helm = (args: string[]) =>
    runCommand(join(homedir(), '.cache/frequency-gateway/bin/helm'), args, {
      env: { ...process.env, KUBECONFIG: '/var/lib/frequency-gateway-cluster/kubeconfig' },
    });
  const ours = (target: Target) => target.labels.namespace === namespace;

  beforeAll(async () => {
    await requireLocalCluster();
    // Prometheus and the operator (built when missing), and the gateway image with the Redis and Kubo stand-ins.
    await runCommand(`${REPOSITORY_ROOT}dev/cluster/monitoring`, [], { cwd: REPOSITORY_ROOT });
    await runCommand('make', ['--no-print-directory', 'images', `IMAGE=${IMAGE_REPOSITORY}:${IMAGE_TAG}`], {
      cwd: REPOSITORY_ROOT,
    });
    namespace = await createNamespace('fg-observe-monitoring');
    await kubectl(['apply', '-f', '-'], JSON.stringify(receiverManifest(namespace, await webhookReceiverProgram())));
    const receiverHost = `webhook-receiver.${namespace}.svc.cluster.local`;
    await helm([
      'install',
      RELEASE,
      `${REPOSITORY_ROOT}charts/frequency-gateway`,
      '--namespace',
      namespace,
      '--wait',
      '--timeout',
      '10m',
      '--set',
      `image.repository=${IMAGE_REPOSITORY}`,
      '--set',
      `image.tag=${IMAGE_TAG}`,
      '--set',
      'image.pullPolicy=Never',
      '--set',
      'devchain.enabled=true',
      '--set',
      'secrets.values.PROVIDER_ACCOUNT_SEED_PHRASE=//Alice',
      '--set',
      'redis.persistence.enabled=false',
      '--set',
      'ipfs.persistence.enabled=false',
      '--set',
      'account.api.replicas=1',
      '--set',
      'contentPublishing.api.replicas=1',
      '--set',
      'contentWatcher.api.replicas=1',
      '--set-json',
      'componentDefaults.topologySpread=[]',
      '--set',
      'metrics.serviceMonitor.enabled=true',
      '--set',
      'metrics.serviceMonitor.interval=5s',
      '--set',
      'metrics.serviceMonitor.scrapeTimeout=4s',
      // Outcome webhooks to the receiver Pod: its name for the components' own check, the Pod range for the
      // webhook NetworkPolicy (both refuse private addresses by default).
      '--set',
      `contentPublishing.config.WEBHOOK_BASE_URL=http://${receiverHost}:8080`,
      '--set',
      'contentPublishing.config.BATCH_INTERVAL_SECONDS=2',
      '--set',
      `outbound.allowedDestinations={${receiverHost},10.244.0.0/16}`,
      '--set',
      `metrics.prometheusRule.alerts.chainUnreachable.for=${CHAIN_ALERT_FOR_SECONDS}s`,
    ]);
    const forward = await portForward(MONITORING_NAMESPACE, 'svc/prometheus-operated', 9090);
    forwards.push(forward);
    prometheus = forward.url;
  }, 30 * 60_000);

  afterAll(async () => {
    await Promise.all(forwards.map((forward) => forward.stop()));
    if (namespace) {
      await helm(['uninstall', RELEASE, '--namespace', namespace, '--wait', '--timeout', '2m']).catch(() => undefined);
      await deleteNamespace(namespace);
    }
  }, 180_000);

  it(
    'scrapes every component: each target up',
    async () => {
      let targets: Target[] = [];
      await waitUntil(
        async () => {
          targets = (await activeTargets(prometheus)).filter(ours);
          return targets.length === COMPONENTS.length && targets.every((target) => target.health === 'up');
        },
        5 * 60_000,
        () => `every component up: ${JSON.stringify(targets.map((t) => [t.labels.service, t.health, t.lastError]))}`,
      );
      for (const target of targets) line(`up ${target.labels.service} (${target.scrapeUrl})`, target.health);
      expect(targets.map((target) => target.labels.service).sort()).toEqual(
        COMPONENTS.map((component) => `${FULLNAME}-${component}`),
      );
      // The same through PromQL: one `up` series per component, each 1.
      const up = await query(prometheus, `up{namespace="${namespace}"}`);
      expect(up.map((sample) => sample.labels.service).sort()).toEqual(targets.map((t) => t.labels.service).sort());
      expect(up.every((sample) => sample.value === 1)).toBe(true);
    },
    6 * 60_000,
  );

  it(
    "reports the gateway's own metrics: requests accepted, queue depth, webhooks delivered",
    async () => {
      const api = await portForward(namespace, `svc/${FULLNAME}-content-publishing-api`, 80);
      forwards.push(api);
      const run = randomBytes(4).toString('hex');
      for (let index = 0; index < BROADCASTS; index++) {
        const response = await fetch(`${api.url}/v1/content/1/broadcast`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            content: { content: `monitoring suite ${run} #${index}`, published: new Date().toISOString() },
          }),
        });
        expect(response.status).toBe(202);
      }
      const inNamespace = `namespace="${namespace}"`;

      const accepted = `sum(content_requests_accepted_total{${inNamespace},kind="broadcast",outcome="new"})`;
      const delivered = `sum(webhook_deliveries_total{${inNamespace},outcome="delivered"})`;
      const backlog = `sum(queue_jobs{${inNamespace},state=~"waiting|active|delayed|prioritized|waiting-children"})`;
      await waitUntil(
        async () =>
          (await scalar(prometheus, accepted)) === BROADCASTS &&
          ((await scalar(prometheus, delivered)) ?? 0) >= BROADCASTS &&
          (await scalar(prometheus, backlog)) === 0,
        5 * 60_000,
        () => `the broadcasts accepted, published and notified in Prometheus (${accepted}; ${delivered}; ${backlog})`,
      );

      expect(await scalar(prometheus, accepted)).toBe(BROADCASTS);
      // One SUCCESS webhook per request, and the receiver had them all.
      const deliveredCount = (await scalar(prometheus, delivered))!;
      expect(deliveredCount).toBe(BROADCASTS);
      const receiver = await portForward(namespace, 'pod/webhook-receiver', 8080);
      forwards.push(receiver);
      const received = await fetchText(`${receiver.url}/received`);
      expect((JSON.parse(received?.body ?? '{}') as { total?: number }).total).toBe(BROADCASTS);
      expect(
        await scalar(prometheus, `sum(webhook_deliveries_total{${inNamespace},outcome!="delivered"}) or vector(0)`),
      ).toBe(0);

      // Queue depth by queue and state, read from Redis at each scrape: every queue of the pipeline is there, its
      // backlog drained, and the requests' jobs counted among the completed ones.
      // (The api and the worker both report the queues they use; the same counts, so the larger of the two.)
      const depth = await query(
        prometheus,
        `max by (queue, state) (queue_jobs{${inNamespace},service=~"${FULLNAME}-content-publishing-(api|worker)"})`,
      );
      const queues = new Set(depth.map((sample) => sample.labels.queue));
      for (const queue of ['requestQueue', 'batchQueue', 'publishQueue', 'webhookQueue'])
        expect(queues).toContain(queue);
      const completedRequests = depth.find(
        (sample) => sample.labels.queue === 'requestQueue' && sample.labels.state === 'completed',
      );
      expect(completedRequests?.value).toBeGreaterThanOrEqual(BROADCASTS);

      line('content_requests_accepted_total{kind="broadcast",outcome="new"}', String(BROADCASTS));
      line('webhook_deliveries_total{outcome="delivered"}', String(deliveredCount));
      for (const sample of depth.filter((sample) => sample.value > 0))
        line(`queue_jobs{queue="${sample.labels.queue}",state="${sample.labels.state}"}`, String(sample.value));
    },
    6 * 60_000,
  );
  it(
    'loads the alerting rules; the devchain scaled to 0 fires GatewayChainUnreachable within its for and one evaluation, and back resolves it',
    async () => {
      const ownRules = async () =>
        (await alertingRules(prometheus)).filter((rule) => rule.file.includes(`/${namespace}-${FULLNAME}-`));
      const rules = await waitUntil(
        async () => {
          const loaded = await ownRules();
          return loaded.length > 0 && loaded;
        },
        3 * 60_000,
        "the chart's PrometheusRule loaded by Prometheus",
      );
      expect(rules).toHaveLength(14);
      expect(rules.find((rule) => rule.alert === 'GatewayChainUnreachable')?.duration).toBe(CHAIN_ALERT_FOR_SECONDS);
      line('alerting rules loaded', String(rules.length));

      const chainAlerts = async (): Promise<Alert[]> =>
        (await activeAlerts(prometheus)).filter(
          (alert) => alert.labels.alertname === 'GatewayChainUnreachable' && alert.labels.namespace === namespace,
        );
      await waitUntil(async () => (await chainAlerts()).length === 0, 2 * 60_000, 'no chain alert before the test');

      const devchain = `deployment/${FULLNAME}-devchain`;
      const stopped = Date.now();
      await kubectl(['-n', namespace, 'scale', devchain, '--replicas=0']);
      let firing: Alert | undefined;
      let firingSeenAt = 0;
      try {
        firing = await waitUntil(
          async () => {
            const found = (await chainAlerts()).find((alert) => alert.state === 'firing');
            if (found) firingSeenAt = Date.now();
            return found;
          },
          5 * 60_000,
          'GatewayChainUnreachable firing',
          500,
        );
      } finally {
        await kubectl(['-n', namespace, 'scale', devchain, '--replicas=1']);
      }
      const restarted = Date.now();
      const pendingAfter = (firing.activeAt.getTime() - stopped) / 1000;
      const firingAfterPending = (firingSeenAt - firing.activeAt.getTime()) / 1000;
      line('devchain scaled to 0 -> chain alert pending (s)', pendingAfter.toFixed(1));
      line('chain alert pending -> firing seen (s)', firingAfterPending.toFixed(1));
      line('devchain scaled to 0 -> chain alert firing (s)', ((firingSeenAt - stopped) / 1000).toFixed(1));
      expect(firing.labels.severity).toBe('critical');
      // Pending once the condition held; firing at the first evaluation after `for` (one poll of slack).
      expect(firingAfterPending).toBeGreaterThanOrEqual(CHAIN_ALERT_FOR_SECONDS);
      expect(firingAfterPending).toBeLessThanOrEqual(CHAIN_ALERT_FOR_SECONDS + EVALUATION_INTERVAL_SECONDS + 1);

      await waitUntil(async () => (await chainAlerts()).length === 0, 5 * 60_000, 'GatewayChainUnreachable resolved');
      line('devchain scaled back to 1 -> chain alert resolved (s)', ((Date.now() - restarted) / 1000).toFixed(1));
    },
    12 * 60_000,
  );
});
