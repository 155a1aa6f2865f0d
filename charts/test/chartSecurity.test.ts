// What the chart protects by default, rendered by a real Helm: secret keys required (a missing or misspelt one
// stops the pod, as the kubelet would), generated credentials never rendered (renders are identical, references
// name keys the hook generates), the queue board behind credentials, tokens, rate limit and the outbound policy
// wired, and NetworkPolicies whose every egress rule names its target and never opens the metadata address.
import type { IContainer } from 'kubernetes-models/v1/Container';
import { COMPONENTS } from '@frequency-gateway/tools/components';
import { CHART, chartHelm, hooksOf, named, NAMESPACE, PREFIX, REQUIRED } from './chartRendering.js';
import { podSpec, selectorMatches, workloads, type K8sObject } from './support/kubernetesObjects.js';

const { helmRun, valuesFile, render, refusal } = chartHelm();

const APIS = COMPONENTS.filter((c) => c.role === 'api').map((c) => `${PREFIX}-${c.name}`);
const WORKERS = COMPONENTS.filter((c) => c.role === 'worker').map((c) => `${PREFIX}-${c.name}`);
const GENERATED = `${PREFIX}-generated`;

const containersOf = (workload: K8sObject): IContainer[] => [
  ...(podSpec(workload).initContainers ?? []),
  ...podSpec(workload).containers,
];

/** Every secretKeyRef in the rendered pods: which workload, which variable, which Secret and key. */
function secretRefs(objects: K8sObject[]) {
  return workloads(objects).flatMap((workload) =>
    containersOf(workload).flatMap((container) =>
      (container.env ?? [])
        .filter((entry) => entry.valueFrom?.secretKeyRef)
        .map((entry) => ({
          workload: workload.metadata.name,
          variable: entry.name,
          ...entry.valueFrom!.secretKeyRef!,
        })),
    ),
  );
}

/**
 * What the kubelet says when it starts a workload's containers and the Secrets in the namespace hold `existing`
 * (Secret name -> its keys): its CreateContainerConfigError messages, or nothing when the containers start.
 */
function startProblems(workload: K8sObject, existing: Record<string, string[]>): string[] {
  return containersOf(workload).flatMap((container) =>
    (container.env ?? []).flatMap((entry) => {
      const ref = entry.valueFrom?.secretKeyRef;
      if (!ref) return [];
      const keys = existing[ref.name!];
      if (keys?.includes(ref.key)) return [];
      if (ref.optional) return [];
      return keys
        ? [`couldn't find key ${ref.key} in Secret ${NAMESPACE}/${ref.name}`]
        : [`secret "${ref.name}" not found`];
    }),
  );
}

/** The Secrets the secrets hook would make: each `ensure-secret` container's --name and its --key names. */
function hookSecrets(objects: K8sObject[]): Record<string, string[]> {
  const job = hooksOf(objects, 'pre-install').find((o) => o.kind === 'Job');
  if (!job) return {};
  return Object.fromEntries(
    podSpec(job).containers.map((container) => {
      const args = container.args ?? [];
      const value = (flag: string) =>
        args.filter((a) => a.startsWith(`--${flag}=`)).map((a) => a.slice(flag.length + 3));
      return [value('name')[0]!, value('key').map((key) => key.split('=')[0]!)] as const;
    }),
  );
}

const envOf = (objects: K8sObject[], name: string) =>
  Object.fromEntries(
    (podSpec(named(objects, 'Deployment', name)!).containers[0]!.env ?? []).map((e) => [
      e.name,
      e.value ?? e.valueFrom?.secretKeyRef,
    ]),
  );

describe('secrets the configuration needs', () => {
  it.each([
    ['defaults', REQUIRED],
    ['everything supplied', { ...REQUIRED, queueBoard: { existingSecret: 'board' }, apiTokens: { enabled: true } }],
    [
      'external IPFS with basic auth',
      { ...REQUIRED, ipfs: { enabled: false }, externalIpfs: { endpoint: 'http://kubo:5001', basicAuthUser: 'gw' } },
    ],
  ])('are all required references with %s (no secretKeyRef is optional)', async (_set, values) => {
    const refs = secretRefs(await render(values));
    expect(refs.length).toBeGreaterThan(10);
    expect(refs.filter((ref) => ref.optional !== undefined)).toEqual([]);
  });

  it('keep the pods that read a missing or misspelt key from starting, naming the key; all start when every key is there', async () => {
    const objects = await render({
      ...REQUIRED,
      queueBoard: { existingSecret: 'board', existingSecretKey: 'QUEUE_BASIC_AUTH' },
    });
    const complete = {
      ...hookSecrets(objects),
      'gateway-keys': ['PROVIDER_ACCOUNT_SEED_PHRASE', 'WEBHOOK_SECRET'],
      board: ['QUEUE_BASIC_AUTH'],
    };
    for (const workload of workloads(objects).filter((w) => w.kind !== 'Pod'))
      expect(`${workload.metadata.name}: ${startProblems(workload, complete).join('; ')}`).toBe(
        `${workload.metadata.name}: `,
      );

    // The platform team's Secret lacks WEBHOOK_SECRET: every worker, which signs webhooks, says so.
    const withoutWebhookKey = { ...complete, 'gateway-keys': ['PROVIDER_ACCOUNT_SEED_PHRASE'] };
    for (const worker of WORKERS)
      expect(startProblems(named(objects, 'Deployment', worker)!, withoutWebhookKey)).toEqual([
        "couldn't find key WEBHOOK_SECRET in Secret gateway/gateway-keys",
      ]);
    // The board's Secret has the key under its right name, the value names it wrongly: every api says so.
    const board = { ...complete, board: ['QUEUES_BASIC_AUTH'] };
    for (const api of APIS)
      expect(startProblems(named(objects, 'Deployment', api)!, board)).toEqual([
        "couldn't find key QUEUE_BASIC_AUTH in Secret gateway/board",
      ]);
  });

  it('references keys that are truly optional only when their feature is on', async () => {
    const off = secretRefs(await render(REQUIRED)).map((ref) => ref.variable);
    expect(off).not.toContain('API_TOKENS');
    expect(off).not.toContain('IPFS_BASIC_AUTH_SECRET');
    const board = secretRefs(await render({ ...REQUIRED, queueBoard: { enabled: false } })).map((ref) => ref.variable);
    expect(board).not.toContain('QUEUES_BASIC_AUTH');
  });
});

describe('generated credentials', () => {
  it('are never rendered: two renders are the same, byte for byte, and no Secret holds a generated value', async () => {
    const template = async () =>
      (await helmRun(['template', 'gw', CHART, '--namespace', NAMESPACE, '-f', valuesFile(REQUIRED)])).stdout;
    expect(await template()).toBe(await template());
    const objects = await render(REQUIRED);
    expect(objects.filter((o) => o.kind === 'Secret').map((o) => o.metadata.name)).toEqual([]);
  });

  it('are read only from keys the hook generates, and the hook generates only keys something reads', async () => {
    for (const values of [
      REQUIRED,
      { ...REQUIRED, apiTokens: { enabled: true }, secrets: { values: { PROVIDER_ACCOUNT_SEED_PHRASE: '//Alice' } } },
      { ...REQUIRED, queueBoard: { user: 'ops' }, redis: { enabled: true, fullnameOverride: 'queue-store' } },
    ]) {
      const objects = await render(values);
      const generated = hookSecrets(objects);
      const refs = secretRefs(objects).filter((ref) => ref.name! in generated);
      for (const ref of refs)
        expect(`${ref.name}/${ref.key}: ${generated[ref.name!]!.includes(ref.key)}`).toBe(
          `${ref.name}/${ref.key}: true`,
        );
      for (const [secret, keys] of Object.entries(generated))
        for (const key of keys) expect(refs.some((ref) => ref.name === secret && ref.key === key)).toBe(true);
    }
  });

  it('by default: the Redis password, the queue board credentials (admin:<random>) and the webhook key when none is given', async () => {
    const objects = await render({ ...REQUIRED, secrets: { values: { PROVIDER_ACCOUNT_SEED_PHRASE: '//Alice' } } });
    const job = hooksOf(objects, 'pre-install').find((o) => o.kind === 'Job')!;
    expect(podSpec(job).containers.map((c) => c.args)).toEqual([
      [
        'ensure-secret',
        `--name=${GENERATED}`,
        '--key=WEBHOOK_SECRET',
        '--key=QUEUES_BASIC_AUTH=admin:',
        '--label=app.kubernetes.io/name=frequency-gateway',
        '--label=app.kubernetes.io/instance=gw',
        '--label=app.kubernetes.io/part-of=frequency-gateway',
        '--label=app.kubernetes.io/component=generated-secrets',
        '--namespace=$(POD_NAMESPACE)',
      ],
      [
        'ensure-secret',
        '--name=gw-redis-generated',
        '--key=redis-password',
        '--label=app.kubernetes.io/name=frequency-gateway',
        '--label=app.kubernetes.io/instance=gw',
        '--label=app.kubernetes.io/part-of=frequency-gateway',
        '--label=app.kubernetes.io/component=generated-secrets',
        '--namespace=$(POD_NAMESPACE)',
      ],
    ]);
    // The chart-made Secret holds only what values gave.
    expect(Object.keys(named(objects, 'Secret', PREFIX)!.data!)).toEqual(['PROVIDER_ACCOUNT_SEED_PHRASE']);
  });

  it('need no hook at all when every credential is brought', async () => {
    const objects = await render({
      ...REQUIRED,
      redis: { enabled: true, auth: { existingSecret: 'redis-credentials' } },
      queueBoard: { existingSecret: 'board' },
    });
    expect(hooksOf(objects, 'pre-install')).toEqual([]);
  });
});

describe('the queue board, api tokens, rate limit and outbound policy', () => {
  it('serves the board on the apis behind generated credentials, or yours, or not at all', async () => {
    const generated = await render(REQUIRED);
    for (const api of APIS)
      expect(envOf(generated, api)).toMatchObject({
        QUEUES_UI: 'true',
        QUEUES_BASIC_AUTH: { name: GENERATED, key: 'QUEUES_BASIC_AUTH' },
      });
    for (const worker of WORKERS) expect(envOf(generated, worker)).not.toHaveProperty('QUEUES_BASIC_AUTH');

    const yours = await render({ ...REQUIRED, queueBoard: { existingSecret: 'board', existingSecretKey: 'auth' } });
    expect(envOf(yours, APIS[0]!).QUEUES_BASIC_AUTH).toEqual({ name: 'board', key: 'auth' });
    expect(hookSecrets(yours)[GENERATED]).toBeUndefined();

    const off = await render({ ...REQUIRED, queueBoard: { enabled: false } });
    for (const api of APIS) {
      expect(envOf(off, api).QUEUES_UI).toBe('false');
      expect(envOf(off, api)).not.toHaveProperty('QUEUES_BASIC_AUTH');
    }
    expect(
      await refusal({ ...REQUIRED, queueBoard: { enabled: false }, ingress: { enabled: true, exposeQueues: true } }),
    ).toContain('ingress.exposeQueues: the queue board is off');
  });

  it('asks the apis, and only them, for bearer tokens when asked to; sets the rate limit on the apis', async () => {
    const off = await render(REQUIRED);
    for (const api of APIS) expect(envOf(off, api)).toMatchObject({ RATE_LIMIT_PER_MINUTE: '0' });
    expect(secretRefs(off).filter((ref) => ref.variable === 'API_TOKENS')).toEqual([]);

    const on = await render({ ...REQUIRED, apiTokens: { enabled: true }, rateLimit: { perMinute: 120 } });
    const readers = secretRefs(on).filter((ref) => ref.variable === 'API_TOKENS');
    expect(readers.map((ref) => ref.workload).sort()).toEqual([...APIS, ...APIS.map((api) => `${api}-test`)].sort());
    expect(new Set(readers.map((ref) => `${ref.name}/${ref.key}`))).toEqual(new Set([`${GENERATED}/API_TOKENS`]));
    for (const api of APIS) expect(envOf(on, api).RATE_LIMIT_PER_MINUTE).toBe('120');
    for (const worker of WORKERS) expect(envOf(on, worker)).not.toHaveProperty('RATE_LIMIT_PER_MINUTE');

    const yours = await render({
      ...REQUIRED,
      apiTokens: { enabled: true, existingSecret: 'tokens', existingSecretKey: 'list' },
    });
    expect(envOf(yours, APIS[1]!).API_TOKENS).toEqual({ name: 'tokens', key: 'list' });
  });

  it('hands the outbound policy and the allowed destinations to every service', async () => {
    const objects = await render({
      ...REQUIRED,
      outbound: {
        policy: 'allowlist',
        allowedDestinations: ['*.svc.cluster.local', '10.20.0.0/16', 'hooks.example.net'],
      },
    });
    for (const service of ['account', 'content-publishing', 'content-watcher'])
      expect(named(objects, 'ConfigMap', `${PREFIX}-${service}`)!.data).toMatchObject({
        OUTBOUND_POLICY: 'allowlist',
        OUTBOUND_ALLOWED_DESTINATIONS: '*.svc.cluster.local,10.20.0.0/16,hooks.example.net',
      });
    const defaults = named(await render(REQUIRED), 'ConfigMap', `${PREFIX}-account`)!.data!;
    expect(defaults.OUTBOUND_POLICY).toBe('public');
    expect(defaults).not.toHaveProperty('OUTBOUND_ALLOWED_DESTINATIONS');
  });
});

type Peer = { ipBlock?: { cidr: string; except?: string[] }; podSelector?: object; namespaceSelector?: object };
type EgressRule = { to?: Peer[]; ports?: { port: number | string; protocol?: string }[] };

const ipv4 = (address: string) => address.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
/** Whether an IPv4 CIDR holds an address. */
function holds(cidr: string, address: string): boolean {
  const [base, length] = cidr.split('/') as [string, string];
  if (base.includes(':')) return false;
  const block = 2 ** (32 - Number(length));
  return Math.floor(ipv4(base) / block) === Math.floor(ipv4(address) / block);
}
const METADATA = '169.254.169.254';
const reachesMetadata = (peer: Peer) =>
  peer.ipBlock !== undefined &&
  holds(peer.ipBlock.cidr, METADATA) &&
  !(peer.ipBlock.except ?? []).some((except) => holds(except, METADATA));

const egressOf = (objects: K8sObject[], name: string): EgressRule[] =>
  named(objects, 'NetworkPolicy', name)!.spec.egress;
/** The rules whose ports include `port`. */
const rulesTo = (rules: EgressRule[], port: number) => rules.filter((rule) => rule.ports?.some((p) => p.port === port));
const cidrsOf = (rules: EgressRule[]) => rules.flatMap((rule) => (rule.to ?? []).map((peer) => peer.ipBlock));

describe('NetworkPolicies', () => {
  it.each([
    ['defaults', REQUIRED],
    [
      'external everything, wide CIDRs and extra rules',
      {
        ...REQUIRED,
        redis: { enabled: false },
        externalRedis: { url: 'redis://10.0.3.4:6379/0' },
        ipfs: { enabled: false },
        externalIpfs: { endpoint: 'http://10.0.3.5:5001' },
        outbound: { allowedDestinations: ['169.254.0.0/16'] },
        networkPolicy: {
          egress: {
            dns: [{ ipBlock: { cidr: '169.254.0.0/16' } }],
            redis: { cidrs: ['0.0.0.0/0'] },
            extra: [{ to: [{ ipBlock: { cidr: '128.0.0.0/1' } }] }],
          },
        },
      },
    ],
  ])('name the target of every egress rule and never open the metadata address (%s)', async (_set, values) => {
    const policies = (await render(values)).filter((o) => o.kind === 'NetworkPolicy');
    expect(policies.length).toBeGreaterThan(6);
    for (const policy of policies)
      for (const rule of (policy.spec.egress ?? []) as EgressRule[]) {
        expect(`${policy.metadata.name}: ${(rule.to ?? []).length > 0}`).toBe(`${policy.metadata.name}: true`);
        const open = (rule.to ?? []).filter(reachesMetadata);
        expect(`${policy.metadata.name}: ${JSON.stringify(open)}`).toBe(`${policy.metadata.name}: []`);
      }
  });

  it('reach the chain, Redis, IPFS, DNS, SIWF, the API server and webhooks by name or the CIDRs given', async () => {
    const objects = await render({
      ...REQUIRED,
      outbound: { allowedDestinations: ['10.20.0.0/16', '192.168.7.7', 'receiver.ns.svc.cluster.local'] },
      networkPolicy: {
        egress: {
          chain: { cidrs: ['203.0.113.7/32'] },
          kubernetesApi: { cidrs: ['192.0.2.10/32'], ports: [6443] },
          siwf: { cidrs: ['198.51.100.0/24'] },
        },
      },
    });
    const watcher = egressOf(objects, `${PREFIX}-content-watcher-worker`);
    expect(cidrsOf(rulesTo(watcher, 443))).toEqual([{ cidr: '203.0.113.7/32' }]);
    expect(cidrsOf(rulesTo(watcher, 6443))).toEqual([{ cidr: '192.0.2.10/32' }]);
    expect(rulesTo(watcher, 6379)[0]!.to).toEqual([
      { podSelector: { matchLabels: { 'app.kubernetes.io/name': 'redis', 'app.kubernetes.io/instance': 'gw' } } },
    ]);
    expect(rulesTo(watcher, 53)[0]!.to).toEqual([
      {
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } },
        podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } },
      },
    ]);
    // Webhooks: public addresses, plus the addresses and CIDRs the outbound policy opens (names cannot be).
    const webhooks = watcher.filter((rule) => !rule.ports)[0]!;
    expect(webhooks.to).toEqual([
      {
        ipBlock: {
          cidr: '0.0.0.0/0',
          except: [
            '10.0.0.0/8',
            '100.64.0.0/10',
            '169.254.0.0/16',
            '172.16.0.0/12',
            '192.168.0.0/16',
            '169.254.169.254/32',
          ],
        },
      },
      { ipBlock: { cidr: '::/0', except: ['fc00::/7', 'fe80::/10'] } },
      { ipBlock: { cidr: '10.20.0.0/16' } },
      { ipBlock: { cidr: '192.168.7.7/32' } },
    ]);
    // Only the workers deliver webhooks; only the account api talks to SIWF.
    for (const api of APIS) expect(egressOf(objects, api).some((rule) => !rule.ports)).toBe(false);
    for (const worker of WORKERS) expect(egressOf(objects, worker).filter((rule) => !rule.ports)).toHaveLength(1);
    const siwf = (name: string) => cidrsOf(egressOf(objects, name)).some((block) => block?.cidr === '198.51.100.0/24');
    expect(APIS.concat(WORKERS).filter(siwf)).toEqual([`${PREFIX}-account-api`]);

    // Several nodes: the components take them all, and may reach every node's port.
    const nodes = await render({
      ...REQUIRED,
      chain: { ...REQUIRED.chain, url: ['wss://a.example.net', 'ws://b.example.net:9944'] },
      networkPolicy: { egress: { chain: { cidrs: ['203.0.113.0/28'] } } },
    });
    const config = named(nodes, 'ConfigMap', `${PREFIX}-content-watcher`)!.data!;
    expect(config.FREQUENCY_API_WS_URL).toBe('wss://a.example.net,ws://b.example.net:9944');
    const toNodes = rulesTo(egressOf(nodes, `${PREFIX}-content-watcher-worker`), 9944);
    expect(toNodes[0]!.ports!.map((p) => p.port).sort()).toEqual([443, 9944]);
    expect(cidrsOf(toNodes)).toEqual([{ cidr: '203.0.113.0/28' }]);

    const devchain = await render({
      chain: { providerId: '1' },
      devchain: { enabled: true },
      secrets: REQUIRED.secrets,
    });
    expect(rulesTo(egressOf(devchain, `${PREFIX}-account-worker`), 9944)[0]!.to).toEqual([
      { podSelector: { matchLabels: expect.objectContaining({ 'app.kubernetes.io/component': 'devchain' }) } },
    ]);
  });

  it('refuse the metadata address given alone, and a CIDR with host bits set, naming the value', async () => {
    const chain = (cidrs: string[]) => refusal({ ...REQUIRED, networkPolicy: { egress: { chain: { cidrs } } } });
    expect(await chain(['169.254.169.254/32'])).toContain(
      'networkPolicy.egress.chain.cidrs: 169.254.169.254/32 is the cloud metadata address, which the chart never opens',
    );
    expect(await chain(['10.0.0.1/8'])).toContain('networkPolicy.egress.chain.cidrs: 10.0.0.1/8 has host bits set');
    expect(
      await refusal({
        ...REQUIRED,
        networkPolicy: { egress: { extra: [{ to: [{ ipBlock: { cidr: '169.254.169.254/32' } }] }] } },
      }),
    ).toContain('networkPolicy.egress.extra: 169.254.169.254/32 is the cloud metadata address');
  });

  it('let the test Pods reach their api when who may call the apis is limited', async () => {
    const objects = await render({
      ...REQUIRED,
      networkPolicy: {
        apiFrom: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress' } } }],
      },
    });
    const tests = workloads(objects).filter((w) => w.kind === 'Pod');
    expect(tests).toHaveLength(APIS.length);
    for (const test of tests) {
      const api = test.metadata.name.replace(/-test$/, '');
      const labels = test.metadata.labels!;
      const admitted = named(objects, 'NetworkPolicy', api)!.spec.ingress.some(
        (rule: { from?: { podSelector?: object }[] }) =>
          rule.from?.some((peer) => peer.podSelector && selectorMatches(peer.podSelector, labels)),
      );
      expect(`${api}: ${admitted}`).toBe(`${api}: true`);
      const own = named(objects, 'NetworkPolicy', `${PREFIX}-tests`)!;
      expect(selectorMatches(own.spec.podSelector, labels)).toBe(true);
      const apiPod = named(objects, 'Deployment', api)!.spec.template.metadata.labels;
      const reaches = own.spec.egress.some((rule: EgressRule) =>
        rule.to?.some((peer) => peer.podSelector && selectorMatches(peer.podSelector, apiPod)),
      );
      expect(`${api}: ${reaches}`).toBe(`${api}: true`);
    }
  });
});
