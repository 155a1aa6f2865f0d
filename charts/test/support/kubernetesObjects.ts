import { ConfigMap, Pod, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Ingress, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { Role, RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { PrometheusRule, ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1';
import { ExternalSecret } from '@kubernetes-models/external-secrets/external-secrets.io/v1';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { scaledObjectProblems } from './kedaScaledObject.js';
import type { K8sObject } from './k8sObject.js';

export type { K8sObject } from './k8sObject.js';

interface Validating {
  validate(): void;
}

/** The Kubernetes, prometheus-operator, KEDA and External Secrets schema of every kind the chart may render. */
const MODELS: Record<string, new (data: never) => Validating> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Pod': Pod,
  'batch/v1/Job': Job,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'v1/ServiceAccount': ServiceAccount,
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'networking.k8s.io/v1/Ingress': Ingress,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'rbac.authorization.k8s.io/v1/Role': Role,
  'rbac.authorization.k8s.io/v1/RoleBinding': RoleBinding,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
  'keda.sh/v1alpha1/ScaledObject': ScaledObject,
  'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule,
  'external-secrets.io/v1/ExternalSecret': ExternalSecret,
};

/** Problems of one object against its schema; a kind without a schema here is a problem too. */
export function schemaProblems(object: K8sObject): string[] {
  const Model = MODELS[`${object.apiVersion}/${object.kind}`];
  const where = `${object.kind} ${object.metadata?.name}`;
  if (!Model) return [`${where}: no schema known for ${object.apiVersion} ${object.kind}`];
  // KEDA's CRD bounds and its admission and scaler checks, which its model does not know.
  const facts = object.kind === 'ScaledObject' ? scaledObjectProblems(object) : [];
  try {
    new Model(object as never).validate();
    return facts;
  } catch (error) {
    return [`${where}: ${(error as Error).message}`, ...facts];
  }
}

/** Everything that runs Pods: Deployments, StatefulSets, Jobs (the hooks) and bare Pods (the `helm test` ones). */
export const workloads = (objects: K8sObject[]) =>
  objects.filter((o) => ['Deployment', 'StatefulSet', 'Job', 'Pod'].includes(o.kind));

export const podSpec = (workload: K8sObject): IPodSpec =>
  (workload.kind === 'Pod' ? workload.spec : workload.spec.template.spec) as IPodSpec;

/** The labels of the Pods a workload runs. */
export const podLabels = (workload: K8sObject): Record<string, string> =>
  (workload.kind === 'Pod' ? workload.metadata.labels : workload.spec.template.metadata.labels) ?? {};

const ALLOWED_VOLUMES = [
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'persistentVolumeClaim',
  'projected',
  'secret',
];

/**
 * Violations of the Kubernetes "restricted" Pod Security Standard (v1.27+), plus a read-only root filesystem,
 * which the standard does not demand and this chart does.
 */
export function restrictedViolations(workload: K8sObject): string[] {
  const pod = podSpec(workload);
  const problems: string[] = [];
  const say = (text: string) => problems.push(`${workload.kind} ${workload.metadata.name}: ${text}`);
  if (pod.hostNetwork || pod.hostPID || pod.hostIPC) say('uses a host namespace');
  for (const volume of pod.volumes ?? []) {
    const type = Object.keys(volume).find((key) => key !== 'name');
    if (!type || !ALLOWED_VOLUMES.includes(type)) say(`volume ${volume.name} is of type ${type}`);
  }
  const podContext = pod.securityContext ?? {};
  const containers: IContainer[] = [...(pod.initContainers ?? []), ...pod.containers];
  for (const container of containers) {
    const context = container.securityContext ?? {};
    const name = `container ${container.name}`;
    if (context.privileged) say(`${name} is privileged`);
    if (context.allowPrivilegeEscalation !== false) say(`${name} does not set allowPrivilegeEscalation: false`);
    if (!(context.runAsNonRoot ?? podContext.runAsNonRoot)) say(`${name} may run as root`);
    if ((context.runAsUser ?? podContext.runAsUser) === 0) say(`${name} runs as uid 0`);
    const seccomp = context.seccompProfile?.type ?? podContext.seccompProfile?.type;
    if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost') say(`${name} has seccomp profile ${seccomp}`);
    if (!context.capabilities?.drop?.includes('ALL')) say(`${name} does not drop ALL capabilities`);
    const added = (context.capabilities?.add ?? []).filter((capability) => capability !== 'NET_BIND_SERVICE');
    if (added.length > 0) say(`${name} adds capabilities ${added.join(', ')}`);
    if ((container.ports ?? []).some((port) => port.hostPort)) say(`${name} uses a host port`);
    if (context.readOnlyRootFilesystem !== true) say(`${name} has a writable root filesystem`);
  }
  return problems;
}

/** Whether a label selector (matchLabels only, as the chart writes them) selects these labels. */
export const selects = (matchLabels: Record<string, string> | undefined, labels: Record<string, string> = {}) =>
  matchLabels !== undefined && Object.entries(matchLabels).every(([key, value]) => labels[key] === value);

interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }[];
}

/** Whether a whole LabelSelector (matchLabels and matchExpressions, as the API server reads them) selects labels. */
export function selectorMatches(selector: LabelSelector, labels: Record<string, string> = {}): boolean {
  const byLabels = Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labels[key] === value);
  const byExpressions = (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    if (operator === 'In') return key in labels && values.includes(labels[key]!);
    if (operator === 'NotIn') return !(key in labels) || !values.includes(labels[key]!);
    return operator === 'Exists' ? key in labels : !(key in labels);
  });
  return byLabels && byExpressions;
}
