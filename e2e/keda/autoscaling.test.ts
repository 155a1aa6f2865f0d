// Queue-driven autoscaling for real: KEDA (dev/cluster/autoscaling, built from its Go module) scales the
// content-publishing worker on its service's backlog, as the chart's ScaledObject reads it from the cluster's
// Prometheus (dev/cluster/monitoring, scraping the chart's ServiceMonitors). The chart is installed in a namespace
// of its own with the worker's ScaledObject on. KEDA is paused at 0 replicas of the worker while broadcasts are
// posted (the worker consumes nothing, so the whole backlog waits); on resuming, KEDA starts the worker, the backlog
// shows in Prometheus, and the HPA that KEDA made raises the worker to its maximum; once the backlog is gone it goes
// back to its minimum. The timings are printed. Needs root and the local cluster's tools (make cluster; builds and
// starts the monitoring stack and KEDA when missing); without them it fails naming what is missing, never skips.
import { randomBytes } from 'node:crypto';
import { callJson, waitUntil } from '@frequency-gateway/devstack';
import {
  baseValues,
  checkPrerequisites,
  clusterUp,
  eachLimited,
  FULLNAME,
  GatewayRelease,
  KubeApi,
  kubectl,
  must,
  prepareImages,
  REPOSITORY,
  type Deployment,
} from '../src/cluster/index.js';

const MONITORING_NAMESPACE = process.env.FG_MONITORING_NAMESPACE ?? 'monitoring';
const WORKER = `${FULLNAME}-content-publishing-worker`;
/** The ScaledObject the chart makes for the worker, and the HPA KEDA makes for it. */
const SCALED_OBJECT = WORKER;
const KEDA_HPA = `keda-hpa-${SCALED_OBJECT}`;
const BROADCASTS = 2000;
const MIN_REPLICAS = 1;
const MAX_REPLICAS = 3;
/** Small, so that a backlog of a few dozen asks for every replica, and the drain keeps asking while it lasts. */
const BACKLOG_PER_REPLICA = 5;
const POLLING_SECONDS = 5;
/**
 * The worker's CPU limit. A broadcast costs its worker about a millisecond of CPU, so an unlimited worker drained
 * 400 of them before Prometheus' next scrape and KEDA never saw a backlog; at a tenth of a core one worker drains a
 * few dozen a second, and the backlog lasts long enough for the HPA's 15 s sync to act on it.
 */
const WORKER_CPU_LIMIT = '100m';

const line = (name: string, value: string) => process.stdout.write(`cluster keda ${name.padEnd(58)} ${value}\n`);

interface HorizontalPodAutoscaler {
  spec: {
    minReplicas?: number;
    maxReplicas: number;
    metrics?: {
      type: string;
      external?: { metric: { name: string; selector?: { matchLabels?: Record<string, string> } } };
    }[];
  };
  status: {
    currentReplicas?: number;
    desiredReplicas?: number;
    currentMetrics?: { external?: { current: { averageValue?: string; value?: string } } }[] | null;
  };
}

interface ScaledObject {
  metadata: { annotations?: Record<string, string> };
  spec: { triggers: { type: string; metadata: Record<string, string> }[] };
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
}

describe('KEDA scales the content-publishing worker on its backlog in the local cluster', () => {
  let kube: KubeApi;
  let release: GatewayRelease;
  let api = '';

  const deployment = () => kube.get<Deployment>(`/apis/apps/v1/namespaces/${release.namespace}/deployments/${WORKER}`);
  const hpa = () =>
    kube.get<HorizontalPodAutoscaler>(
      `/apis/autoscaling/v2/namespaces/${release.namespace}/horizontalpodautoscalers/${KEDA_HPA}`,
    );
  const scaledObject = () =>
    kube.get<ScaledObject>(`/apis/keda.sh/v1alpha1/namespaces/${release.namespace}/scaledobjects/${SCALED_OBJECT}`);
  const condition = (object: ScaledObject, type: string) =>
    object.status?.conditions?.find((entry) => entry.type === type);
  /**
   * The backlog as KEDA serves it to the HPA: the external metric the HPA reads (its name and selector from the
   * HPA's spec), through the aggregation layer, KEDA's metrics API server, its operator and Prometheus.
   */
  const externalBacklog = async (): Promise<number | undefined> => {
    // KEDA removes its HPA while paused, and makes it again on resuming.
    const metric = (await hpa().catch(() => undefined))?.spec.metrics?.[0]?.external?.metric;
    if (!metric) return undefined;
    const labels = Object.entries(metric.selector?.matchLabels ?? {}).map(([name, value]) => `${name}=${value}`);
    const answer = await kube.request(
      'GET',
      `/apis/external.metrics.k8s.io/v1beta1/namespaces/${release.namespace}/${metric.name}` +
        `?labelSelector=${encodeURIComponent(labels.join(','))}`,
    );
    if (answer.status !== 200) return undefined;
    const items = (JSON.parse(answer.body) as { items: { value: string }[] }).items;
    return items[0] ? quantity(items[0].value) : undefined;
  };

  /**
   * When the backlog first showed in what KEDA reads: the first moment (to the second) between two others at which
   * Prometheus' answer to the ScaledObject's own query was above 0, i.e. the scrape that first saw it. The suite's
   * own reads of the external metric come once a second and may see it later than the HPA did.
   */
  const backlogFirstSeenByPrometheus = async (from: number, to: number): Promise<number | undefined> => {
    const query = (await scaledObject()).spec.triggers[0]?.metadata.query;
    if (!query) throw new Error(`ScaledObject ${SCALED_OBJECT} has no query`);
    const range = new URLSearchParams({
      query,
      start: String(from / 1000),
      end: String(Math.ceil(to / 1000)),
      step: '1',
    });
    const answer = await kube.get<{ data: { result: { values: [number, string][] }[] } }>(
      `/api/v1/namespaces/${MONITORING_NAMESPACE}/services/prometheus-operated:9090/proxy/api/v1/query_range?${range}`,
    );
    const first = answer.data.result[0]?.values.find(([, value]) => Number(value) > 0);
    return first ? first[0] * 1000 : undefined;
  };

  beforeAll(async () => {
    checkPrerequisites();
    await clusterUp();
    // Prometheus and KEDA (each built when missing, cached after), and the gateway image.
    await must(`${REPOSITORY}dev/cluster/monitoring`, [], { timeoutMs: 60 * 60_000 });
    await must(`${REPOSITORY}dev/cluster/autoscaling`, [], { timeoutMs: 60 * 60_000 });
    const image = await prepareImages();
    kube = await KubeApi.connect();
    release = new GatewayRelease(kube, `fg-e2e-keda-${randomBytes(3).toString('hex')}`, image);
    await release.createNamespace();
    const base = baseValues(image, release.namespace);
    await release.install({
      ...base,
      redis: { ...base.redis, persistence: { enabled: false } },
      ipfs: { ...base.ipfs, persistence: { enabled: false } },
      metrics: { serviceMonitor: { enabled: true, interval: '5s', scrapeTimeout: '4s' } },
      account: { api: { replicas: 1 } },
      contentWatcher: { api: { replicas: 1 } },
      contentPublishing: {
        api: { replicas: 1 },
        // One request at a time per worker: the backlog lasts long enough to be seen and scaled for.
        config: { REQUEST_CONCURRENCY: '1' },
        worker: {
          resources: { requests: { cpu: '50m', memory: '256Mi' }, limits: { cpu: WORKER_CPU_LIMIT, memory: '768Mi' } },
          keda: {
            enabled: true,
            prometheusServerAddress: `http://prometheus-operated.${MONITORING_NAMESPACE}.svc.cluster.local:9090`,
            minReplicas: MIN_REPLICAS,
            maxReplicas: MAX_REPLICAS,
            backlogPerReplica: BACKLOG_PER_REPLICA,
            pollingInterval: POLLING_SECONDS,
            cooldownPeriod: 30,
          },
        },
      },
    });
    api = await release.nodePortUrl(`${FULLNAME}-content-publishing-api`);
  }, 90 * 60_000);

  afterAll(async () => {
    if (release) {
      await release.helm(['uninstall', 'gw', '--wait', '--timeout', '3m']).catch(() => undefined);
      await release.deleteNamespace().catch(() => undefined);
    }
    kube?.close();
  }, 300_000);

  it(
    "KEDA takes the chart's ScaledObject: it is Ready, makes an HPA on the external backlog metric, and serves the metric",
    async () => {
      let status: ScaledObject['status'];
      await waitUntil(
        async () => {
          const object = await scaledObject();
          status = object.status;
          return condition(object, 'Ready')?.status === 'True';
        },
        3 * 60_000,
        () => `ScaledObject ${SCALED_OBJECT} Ready: ${JSON.stringify(status)}`,
      );
      const autoscaler = await hpa();
      expect(autoscaler.spec.minReplicas).toBe(MIN_REPLICAS);
      expect(autoscaler.spec.maxReplicas).toBe(MAX_REPLICAS);
      expect(autoscaler.spec.metrics?.map((metric) => metric.type)).toEqual(['External']);
      // The backlog of an idle release, through the aggregation layer, KEDA's metrics server, its operator, and
      // Prometheus' answer to the chart's query.
      const backlog = await waitUntil(
        async () => {
          const value = await externalBacklog();
          return value === undefined ? false : { value };
        },
        3 * 60_000,
        'the external backlog metric served',
      );
      expect(backlog.value).toBe(0);
      line('ScaledObject Ready, external backlog metric', String(backlog.value));
    },
    8 * 60_000,
  );

  it(
    'a backlog raises the worker to its maximum, and back to its minimum once it is gone (timings printed)',
    async () => {
      // KEDA paused at 0 replicas: nothing consumes while the backlog is posted.
      await kubectl([
        '-n',
        release.namespace,
        'annotate',
        '--overwrite',
        `scaledobject/${SCALED_OBJECT}`,
        'autoscaling.keda.sh/paused-replicas=0',
      ]);
      await waitUntil(
        async () =>
          (await deployment()).spec.replicas === 0 && (await release.pods('content-publishing-worker')).length === 0,
        3 * 60_000,
        'the worker paused at 0 replicas',
      );
      const run = randomBytes(4).toString('hex');
      const posted = Date.now();
      const answers = await eachLimited([...Array(BROADCASTS).keys()], 32, (index) =>
        callJson(api, 'POST', '/v1/content/1/broadcast', {
          content: { content: `keda suite ${run} #${index}`, published: new Date().toISOString() },
        }),
      );
      expect(answers.filter((answer) => answer.status !== 202)).toEqual([]);
      line(`${BROADCASTS} broadcasts posted (s)`, ((Date.now() - posted) / 1000).toFixed(1));

      const resumed = Date.now();
      await kubectl([
        '-n',
        release.namespace,
        'annotate',
        `scaledobject/${SCALED_OBJECT}`,
        'autoscaling.keda.sh/paused-replicas-',
      ]);
      // Seen in the order they happen: the first worker Ready (its relay moves the intake into the queues, and
      // the backlog shows in what KEDA reads), the HPA's first step above the minimum, the HPA at its maximum. The
      // suite waits until it has read the backlog through the external metrics API itself, not only seen the HPA
      // act on it. The first worker may still be starting when the HPA has scaled it (a tenth of a core each).
      let firstWorkerAt = 0;
      const workerReady = (current: Deployment) => {
        if (!firstWorkerAt && (current.status.readyReplicas ?? 0) >= 1) firstWorkerAt = Date.now();
      };
      let firstScaleUpAt = 0;
      let scaledUpAt = 0;
      let peakBacklog = 0;
      let seen = '';
      await waitUntil(
        async () => {
          const [current, backlog] = await Promise.all([deployment(), externalBacklog()]);
          const now = Date.now();
          seen = `replicas ${current.spec.replicas}, ready ${current.status.readyReplicas ?? 0}, backlog ${backlog}`;
          workerReady(current);
          peakBacklog = Math.max(peakBacklog, backlog ?? 0);
          if (!firstScaleUpAt && (current.spec.replicas ?? 0) > MIN_REPLICAS) firstScaleUpAt = now;
          if (!scaledUpAt && current.spec.replicas === MAX_REPLICAS) scaledUpAt = now;
          return scaledUpAt !== 0 && peakBacklog > BACKLOG_PER_REPLICA * MIN_REPLICAS;
        },
        5 * 60_000,
        () =>
          `the worker scaled to ${MAX_REPLICAS} and a backlog above ${BACKLOG_PER_REPLICA * MIN_REPLICAS} read: ${seen}`,
        1_000,
      );
      expect((await hpa()).status.desiredReplicas).toBe(MAX_REPLICAS);
      const backlogVisibleAt = await backlogFirstSeenByPrometheus(resumed, scaledUpAt);
      if (backlogVisibleAt === undefined) throw new Error('Prometheus had no backlog before the worker was scaled up');
      line('resumed -> backlog visible (first scrape with it) (s)', seconds(resumed, backlogVisibleAt));
      line(`backlog visible -> first scale-up above ${MIN_REPLICAS} (s)`, seconds(backlogVisibleAt, firstScaleUpAt));
      line(`backlog visible -> worker at its maximum, ${MAX_REPLICAS} (s)`, seconds(backlogVisibleAt, scaledUpAt));
      line('largest backlog read through the external metrics API', String(peakBacklog));

      await waitUntil(
        async () => {
          workerReady(await deployment());
          return (await externalBacklog()) === 0;
        },
        10 * 60_000,
        'the backlog drained (external metric 0)',
        1_000,
      );
      const drainedAt = Date.now();
      line('resumed -> first worker Ready (s)', seconds(resumed, firstWorkerAt));
      line('backlog visible -> backlog drained (external metric 0) (s)', seconds(backlogVisibleAt, drainedAt));
      // The HPA's scale-down stabilisation window (300 s by default) before it lowers the worker.
      let autoscalerStatus: HorizontalPodAutoscaler['status'] | undefined;
      await waitUntil(
        async () => {
          autoscalerStatus = (await hpa()).status;
          return (await deployment()).spec.replicas === MIN_REPLICAS;
        },
        10 * 60_000,
        () => `the worker back to ${MIN_REPLICAS}: HPA ${JSON.stringify(autoscalerStatus)}`,
        1_000,
      );
      line(`backlog drained -> worker back to its minimum, ${MIN_REPLICAS} (s)`, seconds(drainedAt, Date.now()));
      expect((await hpa()).status.desiredReplicas).toBe(MIN_REPLICAS);
    },
    30 * 60_000,
  );
});

/** Seconds from one moment to a later one, or n/a when the later one was never seen. */
function seconds(from: number, to: number): string {
  return to ? ((to - from) / 1000).toFixed(1) : 'n/a';
}

/** A Kubernetes quantity as KEDA writes a metric value: plain, or in thousandths (`1500m`). */
function quantity(value: string): number {
  return value.endsWith('m') ? Number(value.slice(0, -1)) / 1000 : Number(value);
}
