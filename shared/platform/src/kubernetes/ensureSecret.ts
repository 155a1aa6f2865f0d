import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions, type V1Secret } from '@kubernetes/client-node';
import {
  describeApiFailure,
  namespaceOrDefault,
  standardOutput,
  statusOf,
  type CommandOutput,
} from './commandSupport.js';

/** One key of a generated Secret: its value is `prefix` followed by a random part (`admin:` + password, say). */
export interface GeneratedKey {
  name: string;
  prefix: string;
}

export interface EnsureSecretOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  name: string;
  keys: GeneratedKey[];
  /** Labels of the Secret when this call creates it; an existing Secret's labels are left alone. */
  labels?: Record<string, string>;
  /** The random part of one value; 32 random bytes as hex unless a test says otherwise. */
  randomPart?: () => string;
}

export interface EnsureSecretOutcome {
  /** `created`: the Secret did not exist; `completed`: keys were added to it; `unchanged`: it had every key. */
  action: 'created' | 'completed' | 'unchanged';
  /** Keys this call wrote. */
  added: string[];
  /** Keys that were there already, and kept their values. */
  kept: string[];
}

/** Why the Secret could not be ensured, in words fit for a Job's log: never a value of the Secret. */
export class EnsureSecretError extends Error {}

/** What the API server accepts as a key of a Secret's data. */
const DATA_KEY = /^[-._a-zA-Z0-9]{1,253}$/;

/** Writes that lost a race (another writer created the Secret or changed it first) are tried again this often. */
const ATTEMPTS = 5;

const randomHex = () => randomBytes(32).toString('hex');

/**
 * Makes sure the Secret `name` exists with every key in `keys`, generating a random value for each key it lacks:
 * creates the Secret when it is missing, adds missing keys to an existing one (a merge patch guarded by its
 * resourceVersion), and never changes or removes a key it already has. Meant to run before the workloads that
 * read the Secret start (a Helm pre-install/pre-upgrade hook, or a plain Job), so that generated credentials are
 * made once, in the cluster, and survive `helm template` and GitOps tools, which cannot read the cluster.
 * The identity needs get and patch on this Secret and create on secrets in the namespace.
 */
export async function ensureSecret(options: EnsureSecretOptions): Promise<EnsureSecretOutcome> {
  const { namespace, name, keys } = options;
  for (const key of keys) {
    if (!DATA_KEY.test(key.name)) throw new EnsureSecretError(`key ${JSON.stringify(key.name)} is not a Secret key`);
  }
  const api = options.kubeConfig.makeApiClient(CoreV1Api);
  const randomPart = options.randomPart ?? randomHex;
  const generate = (wanted: GeneratedKey[]) =>
    Object.fromEntries(
      wanted.map((key) => [key.name, Buffer.from(`${key.prefix}${randomPart()}`).toString('base64')] as const),
    );
  const where = `Secret ${namespace}/${name}`;

  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    let current: V1Secret | undefined;
    try {
      current = await api.readNamespacedSecret({ name, namespace });
    } catch (error) {
      if (statusOf(error) !== 404) throw new EnsureSecretError(`cannot read ${where}: ${describeApiFailure(error)}`);
    }

    if (!current) {
      const body: V1Secret = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name, namespace, ...(options.labels ? { labels: options.labels } : {}) },
        type: 'Opaque',
        data: generate(keys),
      };
      try {
        await api.createNamespacedSecret({ namespace, body });
        return { action: 'created', added: keys.map((key) => key.name), kept: [] };
      } catch (error) {
        // Another writer created it between the read and now: read it again and complete it.
        if (statusOf(error) === 409) continue;
        throw new EnsureSecretError(`cannot create ${where}: ${describeApiFailure(error)}`);
      }
    }

    const present = new Set(Object.keys(current.data ?? {}));
    const missing = keys.filter((key) => !present.has(key.name));
    const kept = keys.filter((key) => present.has(key.name)).map((key) => key.name);
    if (missing.length === 0) return { action: 'unchanged', added: [], kept };
    if (current.immutable) {
      throw new EnsureSecretError(
        `${where} is immutable and lacks ${missing.map((key) => key.name).join(', ')}: delete it, or add them yourself`,
      );
    }
    // A merge patch that adds only the missing keys; with the resourceVersion in it the API server applies it only
    // to the version read above (409 Conflict otherwise), so a key another writer added meanwhile is never replaced.
    const patch = { metadata: { resourceVersion: current.metadata?.resourceVersion }, data: generate(missing) };
    try {
      await api.patchNamespacedSecret(
        { name, namespace, body: patch },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      return { action: 'completed', added: missing.map((key) => key.name), kept };
    } catch (error) {
      if (statusOf(error) === 409 || statusOf(error) === 404) continue;
      throw new EnsureSecretError(
        `cannot add ${missing.map((k) => k.name).join(', ')} to ${where}: ${describeApiFailure(error)}`,
      );
    }
  }
  throw new EnsureSecretError(`${where} kept changing under this command (${ATTEMPTS} attempts); run it again`);
}

export const ENSURE_SECRET_USAGE = `usage: ensure-secret --name NAME --key KEY[=PREFIX] [--key …] [--namespace NAMESPACE] [--label KEY=VALUE …]
Creates the Secret NAME when it is missing, with a random value for each KEY (32 random bytes as hex, after PREFIX
when one is given: --key QUEUES_BASIC_AUTH=admin: makes admin:<random>); adds the KEYs an existing Secret lacks
and never changes one it has. NAMESPACE: the option, else the pod's service account's, else the kubeconfig
context's. Credentials: KUBECONFIG or ~/.kube/config when there is one, else the pod's service account.
`;

export interface EnsureSecretArguments {
  name: string;
  namespace?: string;
  keys: GeneratedKey[];
  labels: Record<string, string>;
}

/** The command's arguments, or the problems with them (each a sentence). */
export function parseEnsureSecretArguments(argv: string[]): EnsureSecretArguments | { problems: string[] } {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        name: { type: 'string' },
        namespace: { type: 'string' },
        key: { type: 'string', multiple: true },
        label: { type: 'string', multiple: true },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    return { problems: [(error as Error).message] };
  }
  const problems: string[] = [];
  if (!parsed.name) problems.push('--name: the Secret to ensure is required');
  const keys = (parsed.key ?? []).map((text) => {
    const at = text.indexOf('=');
    const key = { name: at < 0 ? text : text.slice(0, at), prefix: at < 0 ? '' : text.slice(at + 1) };
    if (!DATA_KEY.test(key.name)) problems.push(`--key ${text}: a Secret key is letters, digits, '-', '_' or '.'`);
    return key;
  });
  if (keys.length === 0) problems.push('--key: at least one key is required');
  const duplicate = keys.find((key, index) => keys.findIndex((other) => other.name === key.name) !== index);
  if (duplicate) problems.push(`--key ${duplicate.name}: given twice`);
  const labels: Record<string, string> = {};
  for (const text of parsed.label ?? []) {
    const at = text.indexOf('=');
    if (at <= 0) problems.push(`--label ${text}: must be KEY=VALUE`);
    else labels[text.slice(0, at)] = text.slice(at + 1);
  }
  if (problems.length > 0) return { problems };
  return { name: parsed.name!, ...(parsed.namespace ? { namespace: parsed.namespace } : {}), keys, labels };
}

/**
 * `gateway ensure-secret …`: exit code 0 when the Secret has every key, 1 when it could not be made so, 2 for
 * wrong arguments. One line tells what was done, naming keys, never values.
 */
export async function runEnsureSecretCommand(argv: string[], output: CommandOutput = standardOutput): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    output.out(ENSURE_SECRET_USAGE.trimEnd());
    return 0;
  }
  const parsed = parseEnsureSecretArguments(argv);
  if ('problems' in parsed) {
    for (const problem of parsed.problems) output.err(`ensure-secret: ${problem}`);
    output.err(ENSURE_SECRET_USAGE.trimEnd());
    return 2;
  }
  try {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromDefault();
    const namespace = parsed.namespace ?? namespaceOrDefault(kubeConfig);
    const outcome = await ensureSecret({ ...parsed, namespace, kubeConfig });
    const where = `Secret ${namespace}/${parsed.name}`;
    const kept = outcome.kept.length > 0 ? `; kept ${outcome.kept.join(', ')} as they were` : '';
    if (outcome.action === 'created') output.out(`${where} created with generated ${outcome.added.join(', ')}`);
    else if (outcome.action === 'completed') output.out(`${where}: generated ${outcome.added.join(', ')}${kept}`);
    else output.out(`${where} already has ${outcome.kept.join(', ')}; nothing changed`);
    return 0;
  } catch (error) {
    output.err(`ensure-secret: ${error instanceof EnsureSecretError ? error.message : describeApiFailure(error)}`);
    return 1;
  }
}
