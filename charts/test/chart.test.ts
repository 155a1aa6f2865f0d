// The Helm chart, rendered by a real Helm: lint, value sets validated against the Kubernetes and
// prometheus-operator schemas, the promises the chart makes (one Deployment per component, probes, restricted
// Pod Security, no secret in a ConfigMap, NetworkPolicies, references that resolve), every component's rendered
// configuration accepted by that component's own configuration schema, and bad values refused.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { parseConfig } from '@frequency-gateway/platform';
import { COMPONENTS, repositoryRoot } from '@frequency-gateway/tools/components';
import { CHART, chartHelm, hooksOf, named, PREFIX, RELEASE, REQUIRED } from './chartRendering.js';
import { scaledObjectProblems } from './support/kedaScaledObject.js';
import {
  podLabels,
  podSpec,
  restrictedViolations,
  schemaProblems,
  selectorMatches,
  selects,
  workloads,
  type K8sObject,
} from './support/kubernetesObjects.js';

const { helmRun, valuesFile, render, refusal } = chartHelm();

/** A container's security context under the restricted Pod Security Standard, for the sidecars of a value set. */
const RESTRICTED = {
  runAsNonRoot: true,
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ['ALL'] },
  seccompProfile: { type: 'RuntimeDefault' },
};

// Secret values planted in the value sets; none may surface outside a Secret.
const SENTINELS = {
  seed: 'sentinel seed phrase words',
  webhook: 'sentinel-webhook-secret',
  ipfs: 'sentinel-ipfs-password',
  redis: 'sentinel-redis-password',
};

const VALUE_SETS: Record<string, object> = {
  defaults: REQUIRED,
  'external Redis and IPFS': {
    ...REQUIRED,
    redis: { enabled: false },
    externalRedis: { url: 'rediss://redis.example.net:6380/2', password: SENTINELS.redis },
    ipfs: { enabled: false },
    externalIpfs: { endpoint: 'https://ipfs.example.net:5443', basicAuthUser: 'gateway' },
  },
  'bundled Redis replicated': {
    ...REQUIRED,
    redis: { enabled: true, mode: 'replicated', metrics: { enabled: true } },
  },
  'ingress with TLS and path routing': {
    ...REQUIRED,
    ingress: {
      enabled: true,
      className: 'nginx',
      routing: 'path',
      host: 'api.example.net',
      tls: { enabled: true, secretName: 'api-tls' },
      exposeQueues: true,
    },
  },
  'autoscaling on': {
    ...REQUIRED,
    componentDefaults: { autoscaling: { enabled: true, minReplicas: 2, maxReplicas: 8 } },
    contentPublishing: {
      enabled: true,
      worker: { autoscaling: { enabled: true, minReplicas: 3, targetMemoryUtilizationPercentage: 80 } },
    },
  },
  'KEDA and tracing on': {
    ...REQUIRED,
    metrics: { serviceMonitor: { enabled: true } },
    tracing: { otlpEndpoint: 'http://otel-collector.monitoring:4318' },
    componentDefaults: {
      autoscaling: { enabled: true },
      keda: { enabled: true, prometheusServerAddress: 'http://prometheus-operated.monitoring:9090' },
    },
    account: { enabled: true, worker: { autoscaling: { enabled: false } } },
    contentPublishing: {
      enabled: true,
      worker: { autoscaling: { enabled: false }, keda: { minReplicas: 2, maxReplicas: 10, backlogPerReplica: 200 } },
    },
    contentWatcher: { enabled: true, worker: { keda: { enabled: false } } },
  },
  'everything optional on': {
    chain: { providerId: '1' },
    devchain: { enabled: true, sealing: 'interval', blockTimeMs: 6000, finalityLag: 2 },
    environment: 'dev',
    secrets: {
      values: {
        PROVIDER_ACCOUNT_SEED_PHRASE: SENTINELS.seed,
        WEBHOOK_SECRET: SENTINELS.webhook,
        IPFS_BASIC_AUTH_SECRET: SENTINELS.ipfs,
      },
    },
    queueBoard: { enabled: true, existingSecret: 'board-credentials', existingSecretKey: 'basic-auth' },
    apiTokens: { enabled: true },
    rateLimit: { perMinute: 600 },
    outbound: {
      policy: 'allowlist',
      allowedDestinations: ['hooks.example.net', '*.svc.cluster.local', '10.20.0.0/16'],
    },
    redis: {
      enabled: true,
      auth: { password: SENTINELS.redis },
      metrics: { enabled: true, serviceMonitor: { enabled: true } },
    },
    ipfs: { enabled: true, swarm: { serviceType: 'LoadBalancer' } },
    ingress: {
      enabled: true,
      tls: { enabled: true, secretName: 'gateway-tls' },
      exposeQueues: true,
      annotations: { 'cert-manager.io/cluster-issuer': 'letsencrypt' },
    },
    metrics: { serviceMonitor: { enabled: true, labels: { release: 'prometheus' } }, dashboards: { enabled: true } },
    componentDefaults: { autoscaling: { enabled: true }, priorityClassName: 'gateway' },
    account: { enabled: true, config: { SIWF_V2_URI_VALIDATION: 'https://app.example.net' } },
    contentPublishing: {
      enabled: true,
      config: { BATCH_INTERVAL_SECONDS: 6 },
      worker: { config: { LOG_LEVEL: 'debug' } },
    },
    contentWatcher: { enabled: true, config: { STARTING_BLOCK: 1 } },
    networkPolicy: {
      apiFrom: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress' } } }],
      metricsFrom: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
      egress: {
        kubernetesApi: { cidrs: ['192.0.2.10/32'], ports: [6443] },
        webhooks: { cidrs: ['0.0.0.0/0'], ports: [443] },
        extra: [{ to: [{ ipBlock: { cidr: '169.254.0.0/16' } }], ports: [{ port: 8125, protocol: 'UDP' }] }],
      },
    },
  },
  'secrets from a store': {
    ...REQUIRED,
    secrets: {
      externalSecret: {
        enabled: true,
        storeRef: { name: 'vault', kind: 'ClusterSecretStore' },
        refreshInterval: '15m',
        remoteKeys: {
          PROVIDER_ACCOUNT_SEED_PHRASE: 'gateway/provider',
          IPFS_BASIC_AUTH_SECRET: { key: 'gateway/ipfs', property: 'password' },
        },
      },
    },
    externalIpfs: { endpoint: 'https://ipfs.example.net:5443', basicAuthUser: 'gateway' },
    ipfs: { enabled: false },
  },
  'extension points': {
    ...REQUIRED,
    global: { imageRegistry: 'mirror.example.net:5000', imagePullSecrets: [{ name: 'mirror-pull' }] },
    commonLabels: { team: 'platform' },
    commonAnnotations: { owner: 'sre' },
    componentDefaults: {
      extraEnvVars: [{ name: 'LOG_LEVEL', value: 'debug' }],
      extraEnvVarsSecret: 'gateway-extra-env',
      extraVolumes: [{ name: 'certs', secret: { secretName: 'gateway-ca' } }],
      extraVolumeMounts: [{ name: 'certs', mountPath: '/certs', readOnly: true }],
      sidecars: [{ name: 'shipper', image: 'mirror.example.net:5000/shipper:1', securityContext: RESTRICTED }],
      initContainers: [{ name: 'wait', image: 'mirror.example.net:5000/wait:1', securityContext: RESTRICTED }],
      podAnnotations: { 'example.net/scrape': 'false' },
      podLabels: { tier: 'gateway' },
    },
  },
};

const rendered = new Map<string, K8sObject[]>();
async function renderSet(name: string): Promise<K8sObject[]> {
  if (!rendered.has(name)) rendered.set(name, await render(VALUE_SETS[name]!));
  return rendered.get(name)!;
}

describe('the chart, rendered by Helm', () => {
  it('passes helm lint --strict with every value set, and its subcharts alone', async () => {
    // Lint checks the subcharts' values against their schemas too; `--with-subcharts` would lint each subchart
    // with the whole values file, which their schemas (unknown keys refused) rightly reject.
    const lints = await Promise.all(
      Object.values(VALUE_SETS).map((values) => helmRun(['lint', '--strict', CHART, '-f', valuesFile(values)])),
    );
    for (const { stdout } of lints) expect(stdout).toContain('0 chart(s) failed');
    for (const subchart of ['redis', 'ipfs']) {
      const { stdout } = await helmRun(['lint', '--strict', join(CHART, 'charts', subchart)]);
      expect(stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
    }
  }, 120_000);

  describe.each(Object.keys(VALUE_SETS))('value set "%s"', (set) => {
    let objects: K8sObject[];
    beforeAll(async () => (objects = await renderSet(set)));

    it('renders only objects that are valid against the Kubernetes, prometheus-operator, KEDA and External Secrets schemas', () => {
      expect(objects.length).toBeGreaterThan(20);
      expect(objects.flatMap(schemaProblems)).toEqual([]);
      const names = objects.map((o) => `${o.kind}/${o.metadata.name}`);
      expect(new Set(names).size).toBe(names.length);
    });

    it('gives every component its own Deployment, running its own command on its own port', () => {
      for (const component of COMPONENTS) {
        const deployment = named(objects, 'Deployment', `${PREFIX}-${component.name}`);
        expect(deployment).toBeDefined();
        const [container] = podSpec(deployment!).containers;
        expect(container!.args).toEqual([component.service, component.role]);
        expect(container!.ports).toEqual([{ name: 'http', containerPort: component.defaultPort, protocol: 'TCP' }]);
      }
    });

    it('probes /livez (startup, liveness) and /readyz (readiness) on the component port', () => {
      const gateway = objects.filter((o) => o.kind === 'Deployment' && o.metadata.name !== `${PREFIX}-devchain`);
      expect(gateway).toHaveLength(COMPONENTS.length);
      for (const deployment of gateway) {
        const [container] = podSpec(deployment).containers;
        expect(container!.startupProbe?.httpGet).toEqual({ path: '/livez', port: 'http' });
        expect(container!.livenessProbe?.httpGet).toEqual({ path: '/livez', port: 'http' });
        expect(container!.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'http' });
      }
    });

    it('runs every pod under the restricted Pod Security Standard with a read-only root filesystem', () => {
      const all = workloads(objects);
      expect(all.length).toBeGreaterThanOrEqual(COMPONENTS.length);
      expect(all.flatMap(restrictedViolations)).toEqual([]);
      for (const workload of all) {
        const mounts = podSpec(workload).containers.flatMap((c) => c.volumeMounts ?? []);
        expect(mounts.map((m) => m.mountPath)).toContain('/tmp');
      }
    });

    it('keeps every secret out of ConfigMaps, plain env values and annotations', () => {
      const exposed = objects
        .filter((o) => o.kind !== 'Secret')
        .map((o) => JSON.stringify(o))
        .join('\n');
      for (const sentinel of Object.values(SENTINELS)) expect(exposed).not.toContain(sentinel);
      for (const map of objects.filter((o) => o.kind === 'ConfigMap'))
        for (const key of Object.keys(map.data ?? {})) expect(key).not.toMatch(/SEED|SECRET|PASSWORD|BASIC_AUTH$/);
    });

    it('gives each component a configuration its own schema accepts, with secrets only from Secrets', () => {
      for (const component of COMPONENTS) {
        const deployment = named(objects, 'Deployment', `${PREFIX}-${component.name}`)!;
        const env = resolveEnvironment(objects, deployment);
        // The service's ConfigMap is shared by its api and worker: each of its keys is read by one of them.
        const service = COMPONENTS.filter((other) => other.service === component.service);
        for (const [name, source] of Object.entries(env.sources)) {
          const readers = source === 'configMap' ? service : [component];
          const known = readers.some((reader) => name in reader.config);
          expect(`${component.name} ${name}: ${known}`).toBe(`${component.name} ${name}: true`);
          if (component.config[name]?.secret) expect(`${name} from ${source}`).toBe(`${name} from secret`);
        }
        expect(() => parseConfig(component.config, env.values)).not.toThrow();
      }
    });

    it('selects every workload (hooks and test Pods too) by a NetworkPolicy, and admits Redis and IPFS clients by label', () => {
      const policies = objects.filter((o) => o.kind === 'NetworkPolicy');
      for (const workload of workloads(objects)) {
        const labels = podLabels(workload);
        const covering = policies.filter((p) => selectorMatches(p.spec.podSelector, labels));
        expect(`${workload.metadata.name}: ${covering.length > 0}`).toBe(`${workload.metadata.name}: true`);
      }
      const redis = named(objects, 'NetworkPolicy', 'gw-redis');
      if (redis) {
        const clients = redis.spec.ingress[0].from[0].podSelector.matchLabels;
        const deployments = objects.filter((o) => o.kind === 'Deployment' && o.metadata.name !== `${PREFIX}-devchain`);
        for (const d of deployments) expect(selects(clients, d.spec.template.metadata.labels)).toBe(true);
      }
    });

    it('points every Service, ServiceMonitor, HPA, ScaledObject, PDB and Ingress backend at something rendered', () => {
      const pods = workloads(objects).map(podLabels);
      const services = objects.filter((o) => o.kind === 'Service');
      for (const service of services.filter((s) => s.spec.clusterIP !== 'None'))
        expect(pods.some((labels) => selects(service.spec.selector, labels))).toBe(true);
      for (const monitor of objects.filter((o) => o.kind === 'ServiceMonitor')) {
        const target = services.find((s) => selects(monitor.spec.selector.matchLabels, s.metadata.labels));
        expect(target?.spec.ports.map((p: { name: string }) => p.name)).toContain(monitor.spec.endpoints[0].port);
      }
      for (const scaler of objects.filter((o) => o.kind === 'HorizontalPodAutoscaler' || o.kind === 'ScaledObject'))
        expect(named(objects, 'Deployment', scaler.spec.scaleTargetRef.name)).toBeDefined();
      for (const pdb of objects.filter((o) => o.kind === 'PodDisruptionBudget'))
        expect(pods.some((labels) => selects(pdb.spec.selector.matchLabels, labels))).toBe(true);
      for (const ingress of objects.filter((o) => o.kind === 'Ingress'))
        for (const rule of ingress.spec.rules)
          for (const path of rule.http.paths) {
            const service = named(objects, 'Service', path.backend.service.name);
            expect(service?.spec.ports.map((p: { name: string }) => p.name)).toContain(path.backend.service.port.name);
          }
    });
  });

  it('defaults: Redis and IPFS bundled, the chain and provider as given, one PDB per multi-replica component', async () => {
    const objects = await renderSet('defaults');
    expect(workloads(objects).map((w) => `${w.kind}/${w.metadata.name}`)).toEqual(
      expect.arrayContaining(['StatefulSet/gw-redis', 'StatefulSet/gw-ipfs']),
    );
    const config = named(objects, 'ConfigMap', `${PREFIX}-content-publishing`)!.data!;
    expect(config).toMatchObject({
      REDIS_URL: 'redis://gw-redis:6379/0',
      IPFS_ENDPOINT: 'http://gw-ipfs:5001',
      FREQUENCY_API_WS_URL: 'wss://frequency.example.net',
      // Leases named per release: two releases in one namespace elect their own leaders.
      LEADER_LEASE_PREFIX: PREFIX,
      PROVIDER_ID: '7',
      ENVIRONMENT: 'production',
    });
    const redis = named(objects, 'StatefulSet', 'gw-redis')!;
    expect(redis.spec.volumeClaimTemplates[0].spec.resources.requests.storage).toBe('8Gi');
    const redisConf = named(objects, 'ConfigMap', 'gw-redis')!.data!['redis.conf']!;
    expect(redisConf).toMatch(/^appendonly yes$/m);
    expect(redisConf).toMatch(/^maxmemory-policy noeviction$/m);
    const budgets = objects.filter((o) => o.kind === 'PodDisruptionBudget').map((o) => o.metadata.name);
    expect(budgets.sort()).toEqual(
      ['account-api', 'content-publishing-api', 'content-watcher-api'].map((name) => `${PREFIX}-${name}`),
    );
    expect(objects.filter((o) => o.kind === 'Ingress' || o.kind === 'HorizontalPodAutoscaler')).toEqual([]);
    const role = named(objects, 'Role', PREFIX)!;
    expect(role).toMatchObject({
      rules: [
        { apiGroups: ['coordination.k8s.io'], resources: ['leases'] },
        { apiGroups: [''], resources: ['events'] },
      ],
    });
  });

  it('an api keeps serving shutdownDelaySeconds after it is told to stop (preStop), within its grace period; a worker stops at once', async () => {
    const objects = await renderSet('defaults');
    for (const name of ['account-api', 'content-publishing-api', 'content-watcher-api']) {
      const container = named(objects, 'Deployment', `${PREFIX}-${name}`)!.spec.template.spec.containers[0];
      // helm template's default Kubernetes version is recent enough for the kubelet's own sleep action.
      expect(`${name} ${JSON.stringify(container.lifecycle)}`).toBe(`${name} {"preStop":{"sleep":{"seconds":5}}}`);
      const grace = container.env.find((variable: { name: string }) => variable.name === 'SHUTDOWN_GRACE_MS');
      expect(`${name} ${grace.value}`).toBe(`${name} 20000`);
      const drain = container.env.find((variable: { name: string }) => variable.name === 'SHUTDOWN_DRAIN_MS');
      expect(`${name} ${drain?.value}`).toBe(`${name} 5000`);
    }
    for (const name of ['account-worker', 'content-publishing-worker', 'content-watcher-worker']) {
      const container = named(objects, 'Deployment', `${PREFIX}-${name}`)!.spec.template.spec.containers[0];
      expect(`${name} ${JSON.stringify(container.lifecycle)}`).toBe(`${name} undefined`);
      const grace = container.env.find((variable: { name: string }) => variable.name === 'SHUTDOWN_GRACE_MS');
      expect(`${name} ${grace.value}`).toBe(`${name} 25000`);
    }
    const off = await render({ ...VALUE_SETS.defaults, componentDefaults: { shutdownDelaySeconds: 0 } });
    const api = named(off, 'Deployment', `${PREFIX}-account-api`)!.spec.template.spec.containers[0];
    expect(api.lifecycle).toBeUndefined();
  });

  it('external Redis and IPFS: no bundled StatefulSets; the URLs as given; the password from a Secret', async () => {
    const objects = await renderSet('external Redis and IPFS');
    expect(objects.filter((o) => o.kind === 'StatefulSet')).toEqual([]);
    const config = named(objects, 'ConfigMap', `${PREFIX}-content-watcher`)!.data!;
    expect(config).toMatchObject({
      REDIS_URL: 'rediss://redis.example.net:6380/2',
      IPFS_ENDPOINT: 'https://ipfs.example.net:5443',
    });
    const worker = named(objects, 'Deployment', `${PREFIX}-content-watcher-worker`)!;
    const env = podSpec(worker).containers[0]!.env!;
    expect(env.find((e) => e.name === 'REDIS_PASSWORD')?.valueFrom?.secretKeyRef).toEqual({
      name: `${PREFIX}-redis`,
      key: 'redis-password',
    });
    const egressPorts = named(objects, 'NetworkPolicy', `${PREFIX}-content-watcher-worker`)!
      .spec.egress.flatMap((rule: { ports?: { port: number }[] }) => rule.ports ?? [])
      .map((p: { port: number }) => p.port);
    expect(egressPorts).toEqual(expect.arrayContaining([6380, 5443, 443]));
  });

  it("secrets from a store: an ExternalSecret makes the keys' Secret, which the components read; the webhook key is generated", async () => {
    const objects = await renderSet('secrets from a store');
    const store = `${PREFIX}-store`;
    expect(objects.filter((o) => o.kind === 'Secret' && o.metadata.name.startsWith(PREFIX))).toEqual([]);
    expect(named(objects, 'ExternalSecret', store)!.spec).toEqual({
      refreshInterval: '15m',
      secretStoreRef: { name: 'vault', kind: 'ClusterSecretStore' },
      target: { name: store, creationPolicy: 'Owner', deletionPolicy: 'Retain' },
      data: [
        { secretKey: 'IPFS_BASIC_AUTH_SECRET', remoteRef: { key: 'gateway/ipfs', property: 'password' } },
        { secretKey: 'PROVIDER_ACCOUNT_SEED_PHRASE', remoteRef: { key: 'gateway/provider' } },
      ],
    });
    const refs = (component: string) =>
      Object.fromEntries(
        podSpec(named(objects, 'Deployment', `${PREFIX}-${component}`)!)
          .containers[0]!.env!.filter((e) => e.valueFrom?.secretKeyRef)
          .map((e) => [e.name, e.valueFrom!.secretKeyRef!.name]),
      );
    expect(refs('account-worker')).toMatchObject({
      PROVIDER_ACCOUNT_SEED_PHRASE: store,
      WEBHOOK_SECRET: `${PREFIX}-generated`,
    });
    expect(refs('content-publishing-worker')).toMatchObject({ IPFS_BASIC_AUTH_SECRET: store });
    const generated = hooksOf(objects, 'pre-install').find((o) => o.kind === 'Job' && /secrets/.test(o.metadata.name));
    expect(JSON.stringify(generated)).toContain('--key=WEBHOOK_SECRET');
    // The store's keys in WEBHOOK_SECRET too: read from there, not generated.
    const withWebhook = await render({
      ...VALUE_SETS['secrets from a store'],
      secrets: {
        externalSecret: {
          enabled: true,
          storeRef: { name: 'vault' },
          remoteKeys: { PROVIDER_ACCOUNT_SEED_PHRASE: 'p', WEBHOOK_SECRET: 'w', IPFS_BASIC_AUTH_SECRET: 'i' },
        },
      },
    });
    const worker = podSpec(named(withWebhook, 'Deployment', `${PREFIX}-content-watcher-worker`)!).containers[0]!.env!;
    expect(worker.find((e) => e.name === 'WEBHOOK_SECRET')?.valueFrom?.secretKeyRef).toEqual({
      name: store,
      key: 'WEBHOOK_SECRET',
    });
    expect(JSON.stringify(withWebhook)).not.toContain('--key=WEBHOOK_SECRET');
  });

  it('renders the values of a release made by a chart before secrets.externalSecret (helm upgrade --reuse-values)', async () => {
    // --reuse-values keeps the release's values and takes no new defaults: the key is absent (null deletes it).
    const before = await render({ ...REQUIRED, secrets: { existingSecret: 'gateway-keys', externalSecret: null } });
    expect(before.filter((o) => o.kind === 'ExternalSecret')).toEqual([]);
    const partial = await render({
      ...REQUIRED,
      secrets: {
        existingSecret: null,
        externalSecret: {
          enabled: true,
          storeRef: { name: 'vault', kind: null },
          refreshInterval: null,
          remoteKeys: { PROVIDER_ACCOUNT_SEED_PHRASE: 'gateway/provider' },
        },
      },
    });
    expect(named(partial, 'ExternalSecret', `${PREFIX}-store`)!.spec).toMatchObject({
      refreshInterval: '1h',
      secretStoreRef: { name: 'vault', kind: 'SecretStore' },
    });
  });

  it('refuses a store without the place of the provider key, without a store name, or beside an existing Secret', async () => {
    const message = await refusal({
      ...REQUIRED,
      secrets: {
        existingSecret: 'gateway-keys',
        externalSecret: { enabled: true, remoteKeys: { WEBHOOK_SECRET: 'w' } },
      },
    });
    expect(message).toContain('secrets.externalSecret.enabled and secrets.existingSecret');
    expect(message).toContain('secrets.externalSecret.storeRef.name');
    const noSeed = await refusal({
      ...REQUIRED,
      secrets: { externalSecret: { enabled: true, storeRef: { name: 'vault' }, remoteKeys: { WEBHOOK_SECRET: 'w' } } },
    });
    expect(noSeed).toContain('secrets.externalSecret.remoteKeys.PROVIDER_ACCOUNT_SEED_PHRASE');
  });

  it('ingress with path routing and TLS: one host, each api under its prefix, served through HTTP_BASE_PATH', async () => {
    const objects = await renderSet('ingress with TLS and path routing');
    const ingress = named(objects, 'Ingress', PREFIX)!;
    expect(ingress.spec.ingressClassName).toBe('nginx');
    expect(ingress.spec.tls).toEqual([{ secretName: 'api-tls', hosts: ['api.example.net'] }]);
    const paths = ingress.spec.rules[0].http.paths.map(
      (p: { path: string; backend: { service: { name: string } } }) =>
        `${p.path} -> ${p.backend.service.name.slice(PREFIX.length + 1)}`,
    );
    expect(paths).toEqual(
      expect.arrayContaining([
        '/account/v1 -> account-api',
        '/content-publishing/v3 -> content-publishing-api',
        '/content-watcher/queues -> content-watcher-api',
        '/account/docs -> account-api',
      ]),
    );
    expect(paths.some((p: string) => /metrics|livez|readyz|\/dev/.test(p))).toBe(false);
    const basePath = (name: string) =>
      podSpec(named(objects, 'Deployment', `${PREFIX}-${name}`)!).containers[0]!.env!.find(
        (e) => e.name === 'HTTP_BASE_PATH',
      )?.value;
    expect(basePath('account-api')).toBe('/account');
    expect(basePath('content-watcher-api')).toBe('/content-watcher');
    expect(basePath('account-worker')).toBeUndefined();
  });

  it('autoscaling on: an HPA per component owns the replica count, with per-component overrides', async () => {
    const objects = await renderSet('autoscaling on');
    const hpas = objects.filter((o) => o.kind === 'HorizontalPodAutoscaler');
    expect(hpas).toHaveLength(COMPONENTS.length);
    // Left out of the manifest: a rendered count the HPA has changed would fail every upgrade (an apply conflict).
    for (const deployment of objects.filter((o) => o.kind === 'Deployment'))
      expect(deployment.spec.replicas).toBeUndefined();
    const worker = named(objects, 'HorizontalPodAutoscaler', `${PREFIX}-content-publishing-worker`)!;
    expect(worker.spec).toMatchObject({ minReplicas: 3, maxReplicas: 8 });
    expect(worker.spec.metrics.map((m: { resource: { name: string } }) => m.resource.name)).toEqual(['cpu', 'memory']);
    expect(objects.filter((o) => o.kind === 'PodDisruptionBudget')).toHaveLength(COMPONENTS.length);
  });

  it("KEDA on: a ScaledObject per worker that asks, on its service's backlog in Prometheus, instead of its HPA", async () => {
    const objects = await renderSet('KEDA and tracing on');
    const scaled = objects.filter((o) => o.kind === 'ScaledObject');
    expect(scaled.map((o) => o.metadata.name).sort()).toEqual(
      [`${PREFIX}-account-worker`, `${PREFIX}-content-publishing-worker`].sort(),
    );
    const publishing = named(objects, 'ScaledObject', `${PREFIX}-content-publishing-worker`)!;
    expect(publishing.spec).toMatchObject({
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: `${PREFIX}-content-publishing-worker` },
      minReplicaCount: 2,
      maxReplicaCount: 10,
    });
    const [trigger] = publishing.spec.triggers;
    expect(trigger).toMatchObject({
      type: 'prometheus',
      metricType: 'AverageValue',
      metadata: { serverAddress: 'http://prometheus-operated.monitoring:9090', threshold: '200' },
    });
    // The backlog of this release's service only: its queues and its intake stream, in its namespace.
    const selector = `namespace="gateway",service=~"${PREFIX}-content-publishing-(api|worker)"`;
    expect(trigger.metadata.query).toContain(`queue_jobs{${selector},state=~"waiting|prioritized"}`);
    expect(trigger.metadata.query).toContain(`intake_backlog{${selector}}`);
    // KEDA owns the worker's count (its own HPA); the apis keep the chart's HPA on CPU.
    const hpas = objects.filter((o) => o.kind === 'HorizontalPodAutoscaler').map((o) => o.metadata.name);
    expect(hpas.sort()).toEqual(
      ['account-api', 'content-publishing-api', 'content-watcher-api', 'content-watcher-worker']
        .map((name) => `${PREFIX}-${name}`)
        .sort(),
    );
    for (const name of ['account-worker', 'content-publishing-worker'])
      expect(named(objects, 'Deployment', `${PREFIX}-${name}`)!.spec.replicas).toBeUndefined();
    const budget = named(objects, 'PodDisruptionBudget', `${PREFIX}-content-publishing-worker`);
    expect(budget).toBeDefined();
    expect(named(objects, 'PodDisruptionBudget', `${PREFIX}-account-worker`)).toBeUndefined();
  });

  it('KEDA facts: what KEDA refuses or drops is found in a ScaledObject', () => {
    const good = {
      apiVersion: 'keda.sh/v1alpha1',
      kind: 'ScaledObject',
      metadata: { name: 'w' },
      spec: {
        scaleTargetRef: { name: 'w' },
        minReplicaCount: 1,
        maxReplicaCount: 3,
        triggers: [{ type: 'prometheus', metadata: { serverAddress: 'http://p:9090', query: 'up', threshold: '5' } }],
      },
    };
    expect(scaledObjectProblems(good)).toEqual([]);
    const bad = {
      ...good,
      spec: {
        ...good.spec,
        minReplicaCount: 4,
        pollingIntervall: 5,
        triggers: [{ type: 'prometheus', metricType: 'Average', metadata: { query: 'up', threshold: 'many' } }],
      },
    };
    expect(scaledObjectProblems(bad)).toEqual([
      'ScaledObject w: spec.pollingIntervall is no field of the CRD',
      'ScaledObject w: minReplicaCount 4 is above maxReplicaCount 3',
      'ScaledObject w: triggers[0].metricType Average is not one of AverageValue, Value, Utilization',
      'ScaledObject w: triggers[0]: the prometheus trigger needs metadata.serverAddress',
      'ScaledObject w: triggers[0].metadata.threshold must be a number',
    ]);
  });

  it("KEDA needs Prometheus and the ServiceMonitors, and excludes the chart's HPA on the same worker", async () => {
    const message = await refusal({
      ...REQUIRED,
      componentDefaults: { autoscaling: { enabled: true }, keda: { enabled: true, minReplicas: 3, maxReplicas: 2 } },
    });
    expect(message).toContain('account.worker.autoscaling.enabled=false');
    expect(message).toContain('contentWatcher.worker.keda.prometheusServerAddress');
    expect(message).toContain('contentPublishing.worker.keda.maxReplicas: at least keda.minReplicas (3)');
    expect(message).toContain(
      'metrics.serviceMonitor.enabled=true: KEDA scales account-worker, content-publishing-worker',
    );
    // Never below one worker: a worker also follows the chain (finalization, the watcher's scan).
    const zero = await refusal({ ...REQUIRED, componentDefaults: { keda: { minReplicas: 0 } } });
    expect(zero).toMatch(/schema/i);
    expect(zero).toContain('minReplicas');
  });

  it("tracing on: every component gets the collector's endpoint, and may reach it through its NetworkPolicy", async () => {
    const objects = await renderSet('KEDA and tracing on');
    for (const service of ['account', 'content-publishing', 'content-watcher'])
      expect(named(objects, 'ConfigMap', `${PREFIX}-${service}`)!.data!.OTEL_EXPORTER_OTLP_ENDPOINT).toBe(
        'http://otel-collector.monitoring:4318',
      );
    for (const name of COMPONENTS.map((component) => component.name)) {
      const policy = named(objects, 'NetworkPolicy', `${PREFIX}-${name}`)!;
      expect(policy.spec.egress).toContainEqual({
        to: [{ namespaceSelector: {} }],
        ports: [{ port: 4318, protocol: 'TCP' }],
      });
    }
    const off = await renderSet('defaults');
    expect(named(off, 'ConfigMap', `${PREFIX}-account`)!.data!.OTEL_EXPORTER_OTLP_ENDPOINT).toBeUndefined();
  });

  it('everything optional on: ServiceMonitors, the devchain as the chain, Redis exporter, hosts with TLS', async () => {
    const objects = await renderSet('everything optional on');
    const monitors = objects.filter((o) => o.kind === 'ServiceMonitor');
    expect(monitors).toHaveLength(COMPONENTS.length + 1);
    expect(monitors.every((m) => m.metadata.name === 'gw-redis' || m.metadata.labels?.release === 'prometheus')).toBe(
      true,
    );
    expect(named(objects, 'Deployment', `${PREFIX}-devchain`)).toBeDefined();
    const config = named(objects, 'ConfigMap', `${PREFIX}-account`)!.data!;
    expect(config).toMatchObject({
      FREQUENCY_API_WS_URL: `ws://${PREFIX}-devchain:9944`,
      PROVIDER_ID: '1',
      ENVIRONMENT: 'dev',
    });
    const ingress = named(objects, 'Ingress', PREFIX)!;
    expect(ingress.spec.rules.map((r: { host: string }) => r.host).sort()).toEqual([
      'account.gateway.example.com',
      'content-publishing.gateway.example.com',
      'content-watcher.gateway.example.com',
    ]);
    expect(ingress.spec.rules[0].http.paths.map((p: { path: string }) => p.path)).toEqual([
      '/v1',
      '/v2',
      '/v3',
      '/dev',
      '/docs',
      '/queues',
    ]);
    const secret = named(objects, 'Secret', PREFIX)!;
    expect(Buffer.from(secret.data!.PROVIDER_ACCOUNT_SEED_PHRASE!, 'base64').toString()).toBe(SENTINELS.seed);
  });

  it('rolls pods when their service configuration changes, and only those', async () => {
    const base = await renderSet('defaults');
    const changed = await render({ ...REQUIRED, contentWatcher: { enabled: true, config: { SCAN_MAX_BLOCKS: 50 } } });
    const checksum = (objects: K8sObject[], name: string) =>
      named(objects, 'Deployment', `${PREFIX}-${name}`)!.spec.template.metadata.annotations['checksum/config'];
    expect(checksum(changed, 'content-watcher-worker')).not.toBe(checksum(base, 'content-watcher-worker'));
    expect(checksum(changed, 'account-api')).toBe(checksum(base, 'account-api'));
  });

  it("keeps the devchain's pod through a chart upgrade: no chart or app version in its pod's labels", async () => {
    const objects = await renderSet('everything optional on');
    const labels = named(objects, 'Deployment', `${PREFIX}-devchain`)!.spec.template.metadata.labels;
    expect(labels).toMatchObject({ 'app.kubernetes.io/component': 'devchain', 'app.kubernetes.io/instance': RELEASE });
    expect(Object.keys(labels)).not.toEqual(expect.arrayContaining(['helm.sh/chart']));
    expect(Object.keys(labels)).not.toEqual(expect.arrayContaining(['app.kubernetes.io/version']));
  });

  it('ends the install with NOTES that say how to watch, debug, test and reach the apis, read the credentials and clean up', async () => {
    const { stdout } = await helmRun([
      'install',
      RELEASE,
      CHART,
      '--dry-run=client',
      '--namespace',
      'gateway',
      '-f',
      valuesFile(REQUIRED),
    ]);
    const notes = stdout.slice(stdout.indexOf('NOTES:'));
    expect(notes).toContain('kubectl -n gateway get pods -l app.kubernetes.io/instance=gw -w');
    expect(notes).toContain('kubectl -n gateway describe pod');
    for (const api of ['account-api 3013', 'content-publishing-api 3010', 'content-watcher-api 3011']) {
      const [name, port] = api.split(' ');
      expect(notes).toContain(`port-forward svc/${PREFIX}-${name} ${port}:80`);
    }
    expect(notes).not.toContain('DEVELOPMENT CHAIN');
    expect(notes).toContain('helm test gw -n gateway --logs');
    // Generated queue board credentials, the webhook key from the existing Secret: each with the command to read it.
    expect(notes).toContain(
      `kubectl -n gateway get secret ${PREFIX}-generated -o jsonpath='{.data.QUEUES_BASIC_AUTH}' | base64 -d`,
    );
    expect(notes).toContain(
      `kubectl -n gateway get secret gateway-keys -o jsonpath='{.data.WEBHOOK_SECRET}' | base64 -d`,
    );
    // What uninstall keeps, and how to delete it: the labels the claims and the generated Secrets carry.
    expect(notes).toContain('delete pvc -l app.kubernetes.io/instance=gw,app.kubernetes.io/name=redis');
    expect(notes).toContain('delete pvc -l app.kubernetes.io/instance=gw,app.kubernetes.io/name=ipfs');
    expect(notes).toContain(
      'delete secret -l app.kubernetes.io/instance=gw,app.kubernetes.io/component=generated-secrets',
    );
  });

  it('bundled Redis replicated: a primary, 2 replicas and 3 Sentinels, announced by name, the components through them', async () => {
    const objects = await renderSet('bundled Redis replicated');
    const statefulSets = objects.filter((o) => o.kind === 'StatefulSet' && o.metadata.name.startsWith('gw-redis'));
    expect(statefulSets.map((o) => `${o.metadata.name} ${o.spec.replicas}`).sort()).toEqual([
      'gw-redis-node 3',
      'gw-redis-sentinel 3',
    ]);
    for (const set of statefulSets) {
      const component = set.spec.selector.matchLabels['app.kubernetes.io/component'];
      const preferred = podSpec(set).affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution;
      expect(preferred?.[0]?.podAffinityTerm).toEqual({
        topologyKey: 'kubernetes.io/hostname',
        labelSelector: { matchLabels: { ...set.spec.selector.matchLabels, 'app.kubernetes.io/component': component } },
      });
      const budget = named(objects, 'PodDisruptionBudget', set.metadata.name)!;
      expect(budget.spec).toEqual({ maxUnavailable: 1, selector: { matchLabels: set.spec.selector.matchLabels } });
      // The password only from the generated Secret.
      const env = podSpec(set).containers[0]!.env!;
      expect(env.find((e) => e.name === 'REDIS_PASSWORD')?.valueFrom?.secretKeyRef).toEqual({
        name: 'gw-redis-generated',
        key: 'redis-password',
      });
    }
    const scripts = named(objects, 'ConfigMap', 'gw-redis')!.data!;
    expect(scripts['sentinel.sh']).toContain('sentinel resolve-hostnames yes');
    expect(scripts['sentinel.sh']).toContain('sentinel announce-hostnames yes');
    expect(scripts['sentinel.sh']).toContain('sentinel monitor gateway $primary 6379 2');
    expect(scripts['node.sh']).toContain('replica-announce-ip $me');
    expect(scripts['primary.sh']).toContain('gw-redis-node-0.gw-redis-node-headless.gateway.svc');
    for (const component of ['node', 'sentinel'])
      expect(named(objects, 'Service', `gw-redis-${component}-headless`)!.spec.publishNotReadyAddresses).toBe(true);
    expect(named(objects, 'StatefulSet', 'gw-redis')).toBeUndefined();

    const sentinels = [0, 1, 2].map((i) => `gw-redis-sentinel-${i}.gw-redis-sentinel-headless.gateway.svc:26379`);
    for (const service of ['account', 'content-publishing', 'content-watcher'])
      expect(named(objects, 'ConfigMap', `${PREFIX}-${service}`)!.data).toMatchObject({
        REDIS_SENTINELS: sentinels.join(','),
        REDIS_SENTINEL_NAME: 'gateway',
        // With replicas, a write counts once one has it (the default; `redisDurability` says otherwise).
        REDIS_DURABILITY: 'replicated',
      });
    const worker = podSpec(named(objects, 'Deployment', `${PREFIX}-content-publishing-worker`)!).containers[0]!.env!;
    expect(worker.find((e) => e.name === 'REDIS_SENTINEL_PASSWORD')?.valueFrom?.secretKeyRef).toEqual({
      name: 'gw-redis-generated',
      key: 'redis-password',
    });
    const ports = (policy: K8sObject, direction: 'ingress' | 'egress') =>
      policy.spec[direction]
        .flatMap((rule: { ports?: { port: number }[] }) => rule.ports ?? [])
        .map((p: { port: number }) => p.port);
    expect(ports(named(objects, 'NetworkPolicy', `${PREFIX}-content-publishing-worker`)!, 'egress')).toEqual(
      expect.arrayContaining([6379, 26379]),
    );
    expect(ports(named(objects, 'NetworkPolicy', 'gw-redis')!, 'egress')).toEqual(
      expect.arrayContaining([6379, 26379, 53]),
    );

    const hard = await render({
      ...REQUIRED,
      redis: { enabled: true, mode: 'replicated', replicated: { podAntiAffinity: 'hard' } },
    });
    const required = podSpec(named(hard, 'StatefulSet', 'gw-redis-node')!).affinity?.podAntiAffinity;
    expect(required?.requiredDuringSchedulingIgnoredDuringExecution?.[0]?.topologyKey).toBe('kubernetes.io/hostname');
    expect(required?.preferredDuringSchedulingIgnoredDuringExecution).toBeUndefined();
    expect(
      await refusal({ ...REQUIRED, redis: { enabled: true, mode: 'replicated', replicated: { quorum: 4 } } }),
    ).toContain('redis.replicated.quorum: 4 is more than the 3 Sentinels');
    expect(await refusal({ ...REQUIRED, redis: { enabled: true, mode: 'sharded' } })).toContain('mode');
  });

  it('sets when a Redis write counts: on a replica too when Redis has replicas, unless redisDurability says otherwise', async () => {
    const durability = async (values: Record<string, unknown>) =>
      named(await render({ ...REQUIRED, ...values }), 'ConfigMap', `${PREFIX}-account`)!.data!.REDIS_DURABILITY;
    const external = { url: 'redis://redis.example.net:6379/0', sentinels: ['sentinel-0.example.net:26379'] };
    expect(await durability({ redis: { enabled: false }, externalRedis: external })).toBe('replicated');
    expect(await durability({ redis: { enabled: false }, externalRedis: { url: external.url } })).toBe('acknowledged');
    expect(await durability({ redis: { enabled: true, mode: 'replicated' }, redisDurability: 'acknowledged' })).toBe(
      'acknowledged',
    );
    expect(await durability({ redis: { enabled: true }, redisDurability: 'replicated' })).toBe('replicated');
    expect(await refusal({ ...REQUIRED, redisDurability: 'always' })).toContain('redisDurability');
  });

  it('follows a renamed bundled Redis and IPFS in URLs and Secret references', async () => {
    const objects = await render({
      ...REQUIRED,
      redis: { enabled: true, fullnameOverride: 'queue-store' },
      ipfs: { enabled: true, fullnameOverride: 'content-node' },
    });
    expect(named(objects, 'StatefulSet', 'queue-store')).toBeDefined();
    expect(named(objects, 'Service', 'content-node')).toBeDefined();
    expect(named(objects, 'ConfigMap', `${PREFIX}-content-publishing`)!.data).toMatchObject({
      REDIS_URL: 'redis://queue-store:6379/0',
      IPFS_ENDPOINT: 'http://content-node:5001',
      // One Redis server: a write counts once it has it.
      REDIS_DURABILITY: 'acknowledged',
    });
    const env = podSpec(named(objects, 'Deployment', `${PREFIX}-account-worker`)!).containers[0]!.env!;
    expect(env.find((e) => e.name === 'REDIS_PASSWORD')?.valueFrom?.secretKeyRef?.name).toBe('queue-store-generated');
    const redis = podSpec(named(objects, 'StatefulSet', 'queue-store')!).containers[0]!.env!;
    expect(redis.find((e) => e.name === 'REDIS_PASSWORD')?.valueFrom?.secretKeyRef?.name).toBe('queue-store-generated');
  });

  it('renders only the enabled services', async () => {
    const objects = await render({
      ...REQUIRED,
      contentPublishing: { enabled: false },
      contentWatcher: { enabled: false },
      ipfs: { enabled: false },
    });
    expect(
      objects
        .filter((o) => o.kind === 'Deployment')
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual([`${PREFIX}-account-api`, `${PREFIX}-account-worker`]);
  });

  it('refuses bare defaults with one message naming every value that has no default', async () => {
    const message = await refusal({});
    expect(message).toContain('chain.url');
    expect(message).toContain('chain.providerId');
    expect(message).toContain('PROVIDER_ACCOUNT_SEED_PHRASE');
  });

  it.each([
    ['an unknown top-level key', { acount: { enabled: true } }, 'acount'],
    ['an unknown ingress routing', { ingress: { routing: 'sideways' } }, 'routing'],
    ['negative replicas', { account: { enabled: true, api: { replicas: -1 } } }, 'replicas'],
    ['an unknown log level', { logLevel: 'loud' }, 'logLevel'],
    ['a chain URL that is not a WebSocket', { chain: { url: 'http://node:9944' } }, 'url'],
    ['a chain node list with an entry that is not a WebSocket', { chain: { url: ['wss://a', 'http://b'] } }, 'url'],
    ['a chain node list naming a node twice', { chain: { url: ['wss://a', 'wss://a'] } }, 'url'],
    ['a chain node text with an empty entry', { chain: { url: 'wss://a,,wss://b' } }, 'url'],
    ['a password inside the external Redis URL', { externalRedis: { url: 'redis://:pw@redis:6379/0' } }, 'url'],
    ['a lower-case variable name in config', { account: { enabled: true, config: { siwf_url: 'x' } } }, 'siwf_url'],
    ['a webhook secret too short to sign with', { secrets: { values: { WEBHOOK_SECRET: 'short' } } }, 'WEBHOOK_SECRET'],
    [
      'a store key that is not one of the gateway keys',
      { secrets: { externalSecret: { remoteKeys: { REDIS_PASSWORD: 'redis' } } } },
      'REDIS_PASSWORD',
    ],
    ['an unknown kind of secret store', { secrets: { externalSecret: { storeRef: { kind: 'Vault' } } } }, 'kind'],
    [
      'a store refresh that is no duration',
      { secrets: { externalSecret: { refreshInterval: 'hourly' } } },
      'refreshInterval',
    ],
    [
      'a bundled Redis fsync mode that does not exist',
      { redis: { enabled: true, appendfsync: 'sometimes' } },
      'appendfsync',
    ],
    ['a bundled IPFS volume size without a unit', { ipfs: { enabled: true, persistence: { size: '20' } } }, 'size'],
    ['a misspelt key under redis:', { redis: { enabled: true, persistance: { size: '1Gi' } } }, 'persistance'],
    ['a misspelt key deeper under redis:', { redis: { enabled: true, auth: { pasword: 'x' } } }, 'pasword'],
    ['a misspelt key under ipfs:', { ipfs: { enabled: true, persistence: { sise: '1Gi' } } }, 'sise'],
    ['a misspelt key under networkPolicy.egress', { networkPolicy: { egress: { webhook: {} } } }, 'webhook'],
    ['a CIDR that is not one', { networkPolicy: { egress: { chain: { cidrs: ['10.0.0.0/33'] } } } }, 'cidrs'],
    ['an unknown outbound policy', { outbound: { policy: 'open' } }, 'policy'],
    [
      'board credentials in secrets.values (now queueBoard)',
      { secrets: { values: { QUEUES_BASIC_AUTH: 'a:b' } } },
      'QUEUES_BASIC_AUTH',
    ],
    ['a root user', { podSecurityContext: { runAsNonRoot: false } }, 'runAsNonRoot'],
    ['a path prefix with a trailing slash', { ingress: { paths: { account: '/account/' } } }, 'account'],
  ])('refuses %s through values.schema.json', async (_what, bad, field) => {
    const message = await refusal({ ...REQUIRED, ...bad });
    expect(message).toMatch(/schema/i);
    expect(message).toContain(field);
  });

  it('serves the components the services define, on the ports they default to', () => {
    const table = readFileSync(join(CHART, 'templates', '_helpers.tpl'), 'utf8');
    for (const component of COMPONENTS)
      expect(table).toMatch(
        new RegExp(
          `^${component.name}: \\{ service: ${component.service}, .*role: ${component.role}, port: ${component.defaultPort},`,
          'm',
        ),
      );
  });

  it('skaffold.yaml deploys this chart, and its dev profile renders with the Services it forwards', async () => {
    const skaffold = parseYaml(readFileSync(join(repositoryRoot, 'skaffold.yaml'), 'utf8'));
    expect(skaffold.build.artifacts[0]).toMatchObject({
      image: 'frequency-gateway',
      docker: { dockerfile: 'Dockerfile' },
    });
    const dev = skaffold.profiles.find((p: { name: string }) => p.name === 'dev');
    for (const release of [skaffold.deploy.helm.releases[0], dev.deploy.helm.releases[0]]) {
      expect(join(repositoryRoot, release.chartPath)).toBe(CHART);
      // The image values skaffold fills in must be ones the chart reads (the digest, once pushed or loaded, wins).
      expect(Object.keys(release.setValueTemplates).sort()).toEqual(['image.digest', 'image.repository', 'image.tag']);
    }
    const release = dev.deploy.helm.releases[0];
    // skaffold passes setValues as --set; a values file with the same tree keeps their YAML types.
    const values = { ...release.setValues, 'image.repository': 'frequency-gateway', 'image.tag': 'dev' };
    const objects = await render(unflatten(values), release.name);
    expect(named(objects, 'Deployment', `${release.name}-devchain`)).toBeDefined();
    const forwards = dev.portForward as { resourceType: string; resourceName: string; port: number }[];
    expect(forwards.map((f) => f.resourceName)).toEqual(
      ['account-api', 'content-publishing-api', 'content-watcher-api'].map((api) => `${release.name}-${api}`),
    );
    for (const forward of forwards) {
      const service = named(objects, 'Service', forward.resourceName);
      expect(service?.spec.ports.map((p: { port: number }) => p.port)).toContain(forward.port);
    }
  });
});

/** `a.b.c: v` keys (skaffold's setValues) as nested values. */
function unflatten(flat: Record<string, unknown>): object {
  const out: Record<string, unknown> = {};
  for (const [path, value] of Object.entries(flat)) {
    const keys = path.split('.');
    let node = out;
    for (const key of keys.slice(0, -1)) node = (node[key] ??= {}) as Record<string, unknown>;
    node[keys.at(-1)!] = value;
  }
  return out;
}

/**
 * The environment a component's container would see: its ConfigMap (envFrom), then its env entries, with
 * fields from the downward API and keys from Secrets (rendered ones decoded; existing ones given test values).
 */
function resolveEnvironment(objects: K8sObject[], deployment: K8sObject) {
  const container = podSpec(deployment).containers[0]!;
  const values: Record<string, string> = {};
  const sources: Record<string, 'configMap' | 'value' | 'field' | 'secret'> = {};
  // A Secret of extra variables (extraEnvVarsSecret) holds whatever its owner put there: nothing to read here.
  for (const from of (container.envFrom ?? []).filter((source) => source.configMapRef)) {
    const map = named(objects, 'ConfigMap', from.configMapRef!.name!)!;
    for (const [key, value] of Object.entries(map.data ?? {})) {
      values[key] = value;
      sources[key] = 'configMap';
    }
  }
  // What an existing Secret would hold, in each variable's own format.
  const EXISTING: Record<string, string> = {
    PROVIDER_ACCOUNT_SEED_PHRASE: '//Alice',
    QUEUES_BASIC_AUTH: 'admin:board-password',
    'basic-auth': 'admin:board-password',
    API_TOKENS: 'backend:token-one-0123456789,ops:token-two-0123456789',
    WEBHOOK_SECRET: 'webhook-signing-key-0123',
    IPFS_BASIC_AUTH_SECRET: 'ipfs-password',
  };
  for (const entry of container.env ?? []) {
    if (entry.value !== undefined) {
      values[entry.name] = entry.value;
      sources[entry.name] = 'value';
    } else if (entry.valueFrom?.fieldRef) {
      values[entry.name] = `from-${entry.valueFrom.fieldRef.fieldPath}`;
      sources[entry.name] = 'field';
    } else if (entry.valueFrom?.secretKeyRef) {
      const { name, key } = entry.valueFrom.secretKeyRef;
      const secret = named(objects, 'Secret', name!);
      const data = secret ? secret.data?.[key] : undefined;
      const value =
        data !== undefined
          ? Buffer.from(data, 'base64').toString()
          : secret
            ? undefined
            : (EXISTING[key] ?? 'from-existing-secret');
      if (value !== undefined) values[entry.name] = value;
      sources[entry.name] = 'secret';
    }
  }
  return { values, sources };
}
