import { kubectl } from '../commands.js';
import { RELEASE } from './release.js';

// The bundled Redis of a release in replicated mode (redis.mode=replicated), as the cluster suites read it: each
// server's and each Sentinel's own view, asked with redis-cli inside its pod (kubectl exec: the pod's REDISCLI_AUTH
// gives the password, which the suite never sees). Names follow the redis subchart: StatefulSets
// `<release>-redis-node` and `<release>-redis-sentinel`, each pod announced as `<pod>.<StatefulSet>-headless.<ns>.svc`.

export const REDIS_NODES = `${RELEASE}-redis-node`;
export const REDIS_SENTINELS = `${RELEASE}-redis-sentinel`;

/** What a server says in INFO replication. */
export interface ServerReplication {
  role: 'master' | 'slave';
  /** A replica's primary (the name it was given), and whether its link to it is up. */
  primaryHost?: string;
  linkUp?: boolean;
  /** A primary's replicas as it lists them: the name each announces, and its state (`online` once in sync). */
  replicas: { host: string; state: string }[];
}

/** The pod a server or Sentinel announces itself by (`<pod>.<service>.<namespace>.svc`). */
export const podOfHost = (host: string) => host.split('.')[0]!;

async function redisCli(namespace: string, pod: string, container: string, args: string[]): Promise<string> {
  return kubectl(['-n', namespace, 'exec', pod, '-c', container, '--', 'redis-cli', '--no-auth-warning', ...args], {
    timeoutMs: 15_000,
  });
}

/** A server's INFO replication. */
export async function replicationOf(namespace: string, pod: string): Promise<ServerReplication> {
  const fields = new Map<string, string>();
  for (const line of (await redisCli(namespace, pod, 'redis', ['info', 'replication'])).split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1));
  }
  const role = fields.get('role');
  if (role !== 'master' && role !== 'slave') throw new Error(`${pod}: INFO replication gives role ${role}`);
  const replicas = [...fields.entries()]
    .filter(([key]) => /^slave\d+$/.test(key))
    .map(([, value]) => {
      const entry = new Map(value.split(',').map((pair) => pair.split('=') as [string, string]));
      return { host: entry.get('ip') ?? '', state: entry.get('state') ?? '' };
    });
  return {
    role,
    replicas,
    ...(role === 'slave'
      ? { primaryHost: fields.get('master_host') ?? '', linkUp: fields.get('master_link_status') === 'up' }
      : {}),
  };
}

/** The primary a Sentinel names for `name` (SENTINEL get-master-addr-by-name), as `host`; empty when none. */
export async function primaryNamedBy(namespace: string, sentinelPod: string, name: string): Promise<string> {
  const answer = await redisCli(namespace, sentinelPod, 'sentinel', [
    '-p',
    '26379',
    'sentinel',
    'get-master-addr-by-name',
    name,
  ]);
  return answer.split(/\r?\n/)[0]?.trim() ?? '';
}

/** What a Sentinel knows of the group `name` (SENTINEL MASTER): flags, replicas and other Sentinels it found. */
export async function sentinelView(
  namespace: string,
  sentinelPod: string,
  name: string,
): Promise<{ flags: string; replicas: number; otherSentinels: number; quorum: number }> {
  const lines = (await redisCli(namespace, sentinelPod, 'sentinel', ['-p', '26379', 'sentinel', 'master', name]))
    .split(/\r?\n/)
    .map((line) => line.trim());
  const fields = new Map<string, string>();
  for (let index = 0; index + 1 < lines.length; index += 2) fields.set(lines[index]!, lines[index + 1]!);
  return {
    flags: fields.get('flags') ?? '',
    replicas: Number(fields.get('num-slaves')),
    otherSentinels: Number(fields.get('num-other-sentinels')),
    quorum: Number(fields.get('quorum')),
  };
}

/** The primary every Sentinel names; fails naming each one's answer when they do not all name the same. */
export async function agreedPrimary(namespace: string, sentinels: number, name: string): Promise<string> {
  const named = await Promise.all(
    Array.from({ length: sentinels }, (_, index) =>
      primaryNamedBy(namespace, `${REDIS_SENTINELS}-${index}`, name).catch((error: unknown) => `(${String(error)})`),
    ),
  );
  if (!named[0] || named.some((host) => host !== named[0]))
    throw new Error(`the Sentinels do not agree on the primary: ${named.join(' | ')}`);
  return named[0];
}

/**
 * The replicas a Sentinel knows of the group `name` (SENTINEL REPLICAS): the name each announces and its flags
 * (`slave`, with `s_down` or `disconnected` while the Sentinel cannot reach it).
 */
export async function replicasSeenBy(
  namespace: string,
  sentinelPod: string,
  name: string,
): Promise<{ host: string; flags: string }[]> {
  const lines = (await redisCli(namespace, sentinelPod, 'sentinel', ['-p', '26379', 'sentinel', 'replicas', name]))
    .split(/\r?\n/)
    .map((line) => line.trim());
  // redis-cli prints the nested reply flat, one value a line: each replica's fields start with `name`.
  const replicas: Map<string, string>[] = [];
  for (let index = 0; index + 1 < lines.length; index += 2) {
    if (lines[index] === 'name') replicas.push(new Map());
    replicas.at(-1)?.set(lines[index]!, lines[index + 1]!);
  }
  return replicas.map((fields) => ({ host: fields.get('ip') ?? '', flags: fields.get('flags') ?? '' }));
}
