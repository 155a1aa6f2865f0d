import { join } from 'node:path';
import { toolCacheDir } from '@frequency-gateway/devstack';
import { kubectl, must, REPOSITORY } from '../commands.js';
import { restrictedPod, suiteLabels } from './manifests.js';

const NAME = 'external-secrets';
const VERSION = 'v0.16.2';
const CRDS = join(toolCacheDir(), `external-secrets-crds-${VERSION}.yaml`);

/** What the controller reads and writes: its own kinds, the Secrets it makes, Events about them. */
const RULES = [
  {
    apiGroups: ['external-secrets.io'],
    resources: ['*'],
    verbs: ['get', 'list', 'watch', 'update', 'patch'],
  },
  { apiGroups: ['generators.external-secrets.io'], resources: ['*'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
  { apiGroups: [''], resources: ['configmaps', 'namespaces', 'serviceaccounts'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
];

/**
 * The controller's objects: a ServiceAccount, a ClusterRole and its binding (named for the namespace: the
 * controller also watches cluster-scoped kinds), and the controller's Pod, watching the namespace only, with the
 * cluster-wide reconcilers off.
 */
function manifests(namespace: string): object {
  const labels = suiteLabels(NAME);
  const clusterName = `${NAME}-${namespace}`;
  const pod = restrictedPod(NAME, labels, {
    name: 'controller',
    image: `external-secrets:${VERSION}`,
    args: [
      `--namespace=${namespace}`,
      '--enable-cluster-store-reconciler=false',
      '--enable-cluster-external-secret-reconciler=false',
      '--enable-cluster-push-secret-reconciler=false',
      '--enable-push-secret-reconciler=false',
      '--metrics-addr=:8080',
      '--loglevel=info',
    ],
    resources: { requests: { cpu: '10m', memory: '64Mi' }, limits: { memory: '256Mi' } },
  }) as { spec: Record<string, unknown> };
  // The controller talks to the API server with its ServiceAccount's token.
  pod.spec.automountServiceAccountToken = true;
  pod.spec.serviceAccountName = NAME;
  return {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: NAME, labels } },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: clusterName, labels },
        rules: RULES,
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: clusterName, labels },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterName },
        subjects: [{ kind: 'ServiceAccount', name: NAME, namespace }],
      },
      pod,
    ],
  };
}

/**
 * The External Secrets Operator's controller (built by dev/images/external-secrets with its test provider) running
 * in a namespace of the local cluster, and SecretStores of that provider (`fake`: the values are in the store's own
 * spec) for the gateway to read its keys from.
 */
export class ExternalSecretsOperator {
  private constructor(private readonly namespace: string) {}

  /** Builds and loads the image, applies the CRDs (server-side: some are too large for apply's annotation), starts it. */
  static async start(namespace: string): Promise<ExternalSecretsOperator> {
    await must(`${REPOSITORY}dev/images/external-secrets`, [], { timeoutMs: 1_800_000 });
    await kubectl(['apply', '--server-side', '--force-conflicts', '-f', CRDS]);
    const kinds = ['externalsecrets', 'secretstores', 'clustersecretstores'];
    await kubectl([
      'wait',
      '--for=condition=Established',
      ...kinds.map((k) => `crd/${k}.external-secrets.io`),
      '--timeout=60s',
    ]);
    await kubectl(['-n', namespace, 'apply', '-f', '-'], { input: JSON.stringify(manifests(namespace)) });
    await kubectl(['-n', namespace, 'wait', '--for=condition=Ready', `pod/${NAME}`, '--timeout=120s']);
    return new ExternalSecretsOperator(namespace);
  }

  /** Creates or replaces a SecretStore of the test provider holding `data` (remote key → value). */
  async store(name: string, data: Record<string, string>): Promise<void> {
    const store = {
      apiVersion: 'external-secrets.io/v1',
      kind: 'SecretStore',
      metadata: { name, labels: suiteLabels(NAME) },
      spec: { provider: { fake: { data: Object.entries(data).map(([key, value]) => ({ key, value })) } } },
    };
    await kubectl(['-n', this.namespace, 'apply', '-f', '-'], { input: JSON.stringify(store) });
  }

  /** Deletes the controller, its stores and its cluster-wide role (the CRDs stay, as other cluster add-ons' do). */
  async stop(): Promise<void> {
    const selector = `app.kubernetes.io/name=${NAME}`;
    await kubectl(['-n', this.namespace, 'delete', 'secretstore,pod,serviceaccount', '-l', selector, '--wait=false']);
    await kubectl(['delete', 'clusterrole,clusterrolebinding', '-l', selector, '--wait=false']);
  }
}
