// The chart's extension points, named as the Bitnami charts name them so that platform teams' values files carry
// over: global.imageRegistry and global.imagePullSecrets (the subcharts' pods included), commonLabels and
// commonAnnotations, and per component (or for every component, in componentDefaults) extraEnvVars,
// extraEnvVarsSecret, extraVolumes, extraVolumeMounts, podAnnotations, podLabels, sidecars and initContainers.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { COMPONENTS } from '@frequency-gateway/tools/components';
import { CHART, chartHelm, named, PREFIX, REQUIRED } from './chartRendering.js';
import { podSpec, workloads, type K8sObject } from './support/kubernetesObjects.js';

const { render, refusal } = chartHelm();
/** The image tag by default: the chart's appVersion. */
const APP_VERSION = (parseYaml(readFileSync(join(CHART, 'Chart.yaml'), 'utf8')) as { appVersion: string }).appVersion;

const deploymentOf = (objects: K8sObject[], component: string) =>
  named(objects, 'Deployment', `${PREFIX}-${component}`)!;

describe('global.imageRegistry and global.imagePullSecrets', () => {
  let objects: K8sObject[];
  beforeAll(async () => {
    objects = await render({
      ...REQUIRED,
      global: { imageRegistry: 'mirror.example.net:5000', imagePullSecrets: [{ name: 'mirror-pull' }] },
      imagePullSecrets: [{ name: 'own-pull' }],
      redis: { metrics: { enabled: true } },
      devchain: { enabled: true },
    });
  });

  it('puts the registry in place of every image’s own, or in front of a name without one', () => {
    const images = workloads(objects).flatMap((workload) =>
      [...podSpec(workload).containers, ...(podSpec(workload).initContainers ?? [])].map((c) => c.image),
    );
    expect(images.length).toBeGreaterThan(COMPONENTS.length);
    expect(images.filter((image) => !image?.startsWith('mirror.example.net:5000/'))).toEqual([]);
    // ghcr.io/… loses its registry; docker.io/library/redis and a bare name keep their path.
    expect(new Set(images)).toContain(`mirror.example.net:5000/frequency-gateway/frequency-gateway:${APP_VERSION}`);
    expect(images.some((image) => image?.endsWith('/library/redis:7.4-alpine'))).toBe(true);
  });

  it('gives every pod the global pull secrets, and this chart’s pods their own too', () => {
    for (const workload of workloads(objects)) {
      const secrets = (podSpec(workload).imagePullSecrets ?? []).map((secret) => secret.name);
      const ours = !/-(redis|ipfs)(-|$)/.test(workload.metadata.name.replace(PREFIX, ''));
      expect([workload.metadata.name, secrets]).toEqual([
        workload.metadata.name,
        ours ? ['mirror-pull', 'own-pull'] : ['mirror-pull'],
      ]);
    }
  });

  it('leaves images and pull secrets as they were without them', async () => {
    const plain = await render(REQUIRED);
    const [container] = podSpec(deploymentOf(plain, 'account-api')).containers;
    expect(container!.image).toBe(`ghcr.io/frequency-gateway/frequency-gateway:${APP_VERSION}`);
    expect(podSpec(deploymentOf(plain, 'account-api')).imagePullSecrets).toBeUndefined();
  });

  it('refuses a registry that is no host', async () => {
    expect(await refusal({ ...REQUIRED, global: { imageRegistry: 'https://mirror.example.net' } })).toMatch(
      /imageRegistry/,
    );
  });
});

describe('commonLabels and commonAnnotations', () => {
  it('label and annotate every resource of this chart, hooks and tests included, beside their own annotations', async () => {
    const objects = await render({
      ...REQUIRED,
      commonLabels: { team: 'platform' },
      commonAnnotations: { owner: 'sre', 'cert-manager.io/cluster-issuer': 'common' },
      ingress: { enabled: true, annotations: { 'cert-manager.io/cluster-issuer': 'letsencrypt' } },
    });
    // This chart's resources (the subcharts' are named after the release alone).
    const ours = objects.filter((o) => o.metadata.name.startsWith(PREFIX));
    expect(ours.length).toBeGreaterThan(30);
    expect(ours.filter((o) => o.metadata.labels?.team !== 'platform').map((o) => o.metadata.name)).toEqual([]);
    expect(ours.filter((o) => o.metadata.annotations?.owner !== 'sre').map((o) => o.metadata.name)).toEqual([]);
    // A resource's own annotation of the same name wins, and hooks keep theirs.
    expect(named(objects, 'Ingress', PREFIX)!.metadata.annotations!['cert-manager.io/cluster-issuer']).toBe(
      'letsencrypt',
    );
    expect(ours.filter((o) => o.metadata.annotations?.['helm.sh/hook']).length).toBeGreaterThan(3);
    // Never in a selector: they may change on an upgrade, a selector may not.
    for (const deployment of objects.filter((o) => o.kind === 'Deployment'))
      expect(deployment.spec.selector.matchLabels.team).toBeUndefined();
  });
});

describe('per component extras', () => {
  const extras = {
    extraEnvVars: [{ name: 'NODE_EXTRA_CA_CERTS', value: '/certs/ca.pem' }],
    extraEnvVarsSecret: 'gateway-extra-env',
    extraVolumes: [{ name: 'certs', secret: { secretName: 'gateway-ca' } }],
    extraVolumeMounts: [{ name: 'certs', mountPath: '/certs', readOnly: true }],
    sidecars: [{ name: 'shipper', image: 'shipper:1' }],
    initContainers: [{ name: 'wait', image: 'wait:1' }],
    podAnnotations: { 'example.net/scrape': 'false' },
    podLabels: { tier: 'gateway' },
  };
  let objects: K8sObject[];
  beforeAll(async () => {
    objects = await render({
      ...REQUIRED,
      componentDefaults: extras,
      account: { worker: { extraEnvVars: [{ name: 'ONLY_HERE', value: '1' }], sidecars: [] } },
    });
  });

  it('gives every component the defaults: variables, a Secret of variables, volumes, mounts, sidecars, init containers, pod labels and annotations', () => {
    for (const component of COMPONENTS.filter((c) => c.name !== 'account-worker')) {
      const deployment = deploymentOf(objects, component.name);
      const pod = podSpec(deployment);
      const [main, ...sidecars] = pod.containers;
      expect(main!.env).toEqual(expect.arrayContaining(extras.extraEnvVars));
      expect(main!.envFrom).toEqual(expect.arrayContaining([{ secretRef: { name: 'gateway-extra-env' } }]));
      expect(main!.volumeMounts).toEqual(expect.arrayContaining(extras.extraVolumeMounts));
      expect(pod.volumes).toEqual(expect.arrayContaining(extras.extraVolumes));
      expect(sidecars).toEqual(extras.sidecars);
      expect(pod.initContainers).toEqual(extras.initContainers);
      expect(deployment.spec.template.metadata.annotations).toMatchObject(extras.podAnnotations);
      expect(deployment.spec.template.metadata.labels).toMatchObject(extras.podLabels);
    }
  });

  it('lets a component replace a default list with its own', () => {
    const pod = podSpec(deploymentOf(objects, 'account-worker'));
    expect(pod.containers).toHaveLength(1);
    expect(pod.containers[0]!.env).toEqual(expect.arrayContaining([{ name: 'ONLY_HERE', value: '1' }]));
    expect(pod.containers[0]!.env).not.toEqual(expect.arrayContaining(extras.extraEnvVars));
  });

  it('puts extraEnvVars after the chart’s own variables, so that one of the same name takes their place', () => {
    const [main] = podSpec(deploymentOf(objects, 'account-api')).containers;
    const names = main!.env!.map((variable) => variable.name);
    expect(names.indexOf('NODE_EXTRA_CA_CERTS')).toBe(names.length - 1);
  });

  it('refuses an extra variable without a name and a mount without a path', async () => {
    expect(await refusal({ ...REQUIRED, componentDefaults: { extraEnvVars: [{ value: 'x' }] } })).toMatch(
      /extraEnvVars/,
    );
    expect(await refusal({ ...REQUIRED, account: { api: { extraVolumeMounts: [{ name: 'certs' }] } } })).toMatch(
      /extraVolumeMounts/,
    );
  });
});
