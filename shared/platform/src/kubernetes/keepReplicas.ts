import { parseArgs } from 'node:util';
import { AppsV1Api, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import {
  describeApiFailure,
  namespaceOrDefault,
  standardOutput,
  statusOf,
  type CommandOutput,
} from './commandSupport.js';

export interface KeepReplicasOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  deployments: string[];
  /** The server-side apply field manager that keeps each count. */
  fieldManager: string;
}

export interface KeptReplicas {
  deployment: string;
  /** The count now co-owned by the field manager; undefined when the Deployment does not exist (yet). */
  replicas?: number;
}

/** Why a count could not be kept, in words fit for a Job's log. */
export class KeepReplicasError extends Error {}

/** An apply that met a count the autoscaler had just changed is tried again with the new count, this often. */
const ATTEMPTS = 5;

/**
 * Makes `fieldManager` an owner of each Deployment's current `spec.replicas`, by a server-side apply of that count
 * (no force: should the autoscaler change it between the read and the apply, the API server answers 409 and the
 * new count is read and applied). With server-side apply, a manifest that stops setting `spec.replicas` (because a
 * HorizontalPodAutoscaler now owns the count) removes the field only when its applier was the field's only owner,
 * and the API server then resets it to 1, killing all Pods but one until the autoscaler raises the count again.
 * Run before such an apply (a pre-upgrade hook), this makes the applier not the only owner, so the count stays.
 * A Deployment that does not exist is left alone (an apply would create it). Needs get and patch on each.
 */
export async function keepReplicas(options: KeepReplicasOptions): Promise<KeptReplicas[]> {
  const { namespace, fieldManager } = options;
  const api = options.kubeConfig.makeApiClient(AppsV1Api);
  const kept: KeptReplicas[] = [];
  for (const name of options.deployments) {
    const where = `Deployment ${namespace}/${name}`;
    let done = false;
    for (let attempt = 1; attempt <= ATTEMPTS && !done; attempt++) {
      let replicas: number | undefined;
      try {
        replicas = (await api.readNamespacedDeployment({ name, namespace })).spec?.replicas;
      } catch (error) {
        if (statusOf(error) !== 404) throw new KeepReplicasError(`cannot read ${where}: ${describeApiFailure(error)}`);
        kept.push({ deployment: name });
        done = true;
        continue;
      }
      if (replicas === undefined) throw new KeepReplicasError(`${where} has no spec.replicas`);
      const body = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace }, spec: { replicas } };
      try {
        await api.patchNamespacedDeployment(
          { name, namespace, body, fieldManager, force: false },
          setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
        );
        kept.push({ deployment: name, replicas });
        done = true;
      } catch (error) {
        if (statusOf(error) === 409) continue;
        throw new KeepReplicasError(`cannot keep the replicas of ${where}: ${describeApiFailure(error)}`);
      }
    }
    if (!done)
      throw new KeepReplicasError(`the replicas of ${where} kept changing (${ATTEMPTS} attempts); run it again`);
  }
  return kept;
}

export const KEEP_REPLICAS_USAGE = `usage: keep-replicas --deployment NAME [--deployment …] [--field-manager NAME] [--namespace NAMESPACE]
Applies each Deployment's current spec.replicas (server-side apply, as --field-manager, default replicas-keeper), so
that a manifest that stops setting replicas (an autoscaler takes over) leaves the count as it is instead of
resetting it to 1. A Deployment that does not exist is skipped. NAMESPACE and credentials as for ensure-secret.
`;

/** `gateway keep-replicas …`: exit 0 when every count is kept, 1 when one could not be, 2 for wrong arguments. */
export async function runKeepReplicasCommand(argv: string[], output: CommandOutput = standardOutput): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    output.out(KEEP_REPLICAS_USAGE.trimEnd());
    return 0;
  }
  let values;
  try {
    values = parseArgs({
      args: argv,
      options: {
        deployment: { type: 'string', multiple: true },
        'field-manager': { type: 'string', default: 'replicas-keeper' },
        namespace: { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    output.err(`keep-replicas: ${(error as Error).message}\n${KEEP_REPLICAS_USAGE.trimEnd()}`);
    return 2;
  }
  if (!values.deployment?.length) {
    output.err(`keep-replicas: --deployment: at least one is required\n${KEEP_REPLICAS_USAGE.trimEnd()}`);
    return 2;
  }
  try {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromDefault();
    const namespace = values.namespace ?? namespaceOrDefault(kubeConfig);
    // One Deployment at a time, each told as soon as it is done.
    for (const name of values.deployment) {
      const [{ deployment, replicas }] = (await keepReplicas({
        kubeConfig,
        namespace,
        deployments: [name],
        fieldManager: values['field-manager'],
      })) as [KeptReplicas];
      output.out(
        replicas === undefined
          ? `Deployment ${namespace}/${deployment} does not exist yet: nothing to keep`
          : `Deployment ${namespace}/${deployment}: replicas ${replicas} kept (co-owned by ${values['field-manager']})`,
      );
    }
    return 0;
  } catch (error) {
    output.err(`keep-replicas: ${error instanceof KeepReplicasError ? error.message : describeApiFailure(error)}`);
    return 1;
  }
}
