// What KEDA accepts in a ScaledObject beyond what @kubernetes-models/keda checks (its schema comes from KEDA's Go
// types and leaves out the CRD's bounds). Facts read from kedacore/keda (commit 8b4f083c, August 2026):
// config/crd/bases/keda.sh_scaledobjects.yaml (the CRD: spec's fields, their minimums; unknown fields are pruned by
// the API server without a word, so a misspelt one would silently do nothing), apis/keda/v1alpha1 (the admission
// webhook: minReplicaCount at most maxReplicaCount; metricType one of autoscaling/v2's target types) and
// pkg/scalers/prometheus_scaler.go (the prometheus trigger's metadata: serverAddress, query and threshold required,
// threshold and activationThreshold numbers).
import type { K8sObject } from './k8sObject.js';

/** The fields of a ScaledObject's spec in the CRD. */
const SPEC_FIELDS = new Set([
  'advanced',
  'cooldownPeriod',
  'fallback',
  'idleReplicaCount',
  'initialCooldownPeriod',
  'maxReplicaCount',
  'minReplicaCount',
  'pollingInterval',
  'scaleTargetRef',
  'triggers',
]);
const TRIGGER_FIELDS = new Set(['authenticationRef', 'metadata', 'metricType', 'name', 'type', 'useCachedMetrics']);
/** The CRD's minimum of each integer field of the spec. */
const MINIMUMS: Record<string, number> = {
  cooldownPeriod: 0,
  idleReplicaCount: 0,
  initialCooldownPeriod: 0,
  maxReplicaCount: 1,
  minReplicaCount: 0,
  pollingInterval: 1,
};
const METRIC_TYPES = new Set(['AverageValue', 'Value', 'Utilization']);
const PROMETHEUS_REQUIRED = ['serverAddress', 'query', 'threshold'];
const PROMETHEUS_NUMBERS = ['threshold', 'activationThreshold'];

/** What KEDA would refuse, or silently drop, in a ScaledObject. */
export function scaledObjectProblems(object: K8sObject): string[] {
  const where = `ScaledObject ${object.metadata.name}`;
  const spec = (object.spec ?? {}) as Record<string, unknown>;
  const problems: string[] = [];
  for (const field of Object.keys(spec))
    if (!SPEC_FIELDS.has(field)) problems.push(`${where}: spec.${field} is no field of the CRD`);
  for (const [field, minimum] of Object.entries(MINIMUMS)) {
    const value = spec[field];
    if (value !== undefined && (!Number.isInteger(value) || (value as number) < minimum))
      problems.push(`${where}: spec.${field} must be an integer of at least ${minimum}`);
  }
  const min = (spec.minReplicaCount as number | undefined) ?? 0;
  const max = (spec.maxReplicaCount as number | undefined) ?? 100;
  if (min > max) problems.push(`${where}: minReplicaCount ${min} is above maxReplicaCount ${max}`);
  const triggers = (spec.triggers ?? []) as Record<string, unknown>[];
  if (triggers.length === 0) problems.push(`${where}: no trigger`);
  for (const [index, trigger] of triggers.entries()) {
    const at = `${where}: triggers[${index}]`;
    for (const field of Object.keys(trigger))
      if (!TRIGGER_FIELDS.has(field)) problems.push(`${at}.${field} is no field of the CRD`);
    if (trigger.metricType !== undefined && !METRIC_TYPES.has(trigger.metricType as string))
      problems.push(`${at}.metricType ${String(trigger.metricType)} is not one of ${[...METRIC_TYPES].join(', ')}`);
    const metadata = (trigger.metadata ?? {}) as Record<string, unknown>;
    for (const [key, value] of Object.entries(metadata))
      if (typeof value !== 'string') problems.push(`${at}.metadata.${key} must be a string`);
    if (trigger.type === 'prometheus') {
      for (const key of PROMETHEUS_REQUIRED)
        if (!metadata[key]) problems.push(`${at}: the prometheus trigger needs metadata.${key}`);
      for (const key of PROMETHEUS_NUMBERS)
        if (metadata[key] !== undefined && !Number.isFinite(Number(metadata[key])))
          problems.push(`${at}.metadata.${key} must be a number`);
    }
  }
  return problems;
}
