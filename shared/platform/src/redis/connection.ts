import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { RedisEndpoint } from './endpoint.js';

/**
 * How a connection behaves while Redis is away:
 * - `queued`: commands wait for the reconnection (ioredis' default); for the component's own keys.
 * - `failFast`: commands fail at once; for probes, leases and producers that must answer quickly.
 * - `blocking`: commands wait without limit, as BullMQ workers require.
 *
 * The first two pipeline automatically: commands issued in one turn of the event loop (many requests' status
 * records, a batch's updates) leave in one write, which saves a system call each. Blocking connections, where
 * BullMQ's workers wait for jobs, do not.
 */
export type RedisMode = 'queued' | 'failFast' | 'blocking';

const MODES: Record<RedisMode, RedisOptions> = {
  queued: { enableAutoPipelining: true },
  failFast: { enableOfflineQueue: false, maxRetriesPerRequest: 0, enableAutoPipelining: true },
  blocking: { maxRetriesPerRequest: null },
};

/** A connection to one Redis (single or behind Sentinel) or to a Redis Cluster: every command either takes. */
export type RedisClient = Redis | Cluster;

/**
 * Opens a connection to the endpoint (a URL alone: one server) that starts connecting at once and keeps
 * reconnecting. Connection errors are not logged here: an outage is reported once, by the readiness
 * controller, instead of on every retry.
 */
export function openRedis(endpoint: RedisEndpoint | string, mode: RedisMode = 'queued'): RedisClient {
  const target: RedisEndpoint = typeof endpoint === 'string' ? { kind: 'single', url: endpoint } : endpoint;
  const connection = target.kind === 'cluster' ? openCluster(target, mode) : openServer(target, mode);
  connection.on('error', () => undefined);
  void connection.connect().catch(() => undefined);
  return connection;
}

/** After a failover a connection may still reach the demoted primary: its writes get READONLY until it reconnects. */
const reconnectWhenReadOnly = (error: Error) => (error.message.startsWith('READONLY') ? 2 : false);

function openServer(endpoint: Exclude<RedisEndpoint, { kind: 'cluster' }>, mode: RedisMode): Redis {
  if (endpoint.kind === 'single') return new Redis(endpoint.url, { ...MODES[mode], lazyConnect: true });
  // The Sentinels name the primary at every (re)connection, so the component follows a failover without a
  // restart: a dead primary closes the connection; a primary demoted alive has its clients killed by the Sentinels
  // (CLIENT KILL) and refuses writes until then (READONLY, reconnectWhenReadOnly).
  //
  // No failoverDetector: on +switch-master it aborts the connection's attempt under way, and an attempt aborted
  // while it asks a Sentinel for the primary ends the connection for good (ioredis gives up, status `end`).
  // After a kill -9 every connection is retrying just then: in one run of five a component kept a connection
  // that never came back (its readiness, or its intake relay, stuck on "Connection is closed"). What the detector
  // would add, leaving a primary cut off from the Sentinels but not from us before it is demoted, costs nothing
  // durable: with REDIS_DURABILITY=replicated such a primary, which no replica follows, acknowledges nothing.
  return new Redis(endpoint.url, {
    ...MODES[mode],
    lazyConnect: true,
    sentinels: endpoint.sentinels,
    name: endpoint.name,
    ...(endpoint.sentinelPassword === undefined ? {} : { sentinelPassword: endpoint.sentinelPassword }),
    failoverDetector: false,
    reconnectOnError: reconnectWhenReadOnly,
  });
}

function openCluster(endpoint: Extract<RedisEndpoint, { kind: 'cluster' }>, mode: RedisMode): Cluster {
  const url = new URL(endpoint.url);
  const { enableOfflineQueue, enableAutoPipelining, maxRetriesPerRequest } = MODES[mode];
  return new Cluster(endpoint.nodes, {
    lazyConnect: true,
    ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
    ...(enableAutoPipelining === undefined ? {} : { enableAutoPipelining }),
    redisOptions: {
      ...(maxRetriesPerRequest === undefined ? {} : { maxRetriesPerRequest }),
      ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
      ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
      ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
    },
  });
}

/**
 * The connection to the server that holds `key`: `connection` itself, or on a Redis Cluster the one to the
 * primary of the key's slot (the very connection the cluster client sends that key's commands on), for
 * commands that name no key but must reach that server, such as WAIT.
 */
export async function connectionFor(connection: RedisClient, key: string): Promise<Redis> {
  if (!(connection instanceof Cluster)) return connection;
  const slot = (await connection.cluster('KEYSLOT', key)) as number;
  const owner = connection.slots[slot]?.[0];
  const node = connection
    .nodes('master')
    .find((candidate) => `${candidate.options.host}:${candidate.options.port}` === owner);
  if (!node) throw new Error(`no connection to the primary of slot ${slot} (${owner ?? 'unknown'})`);
  return node;
}

/** A second connection like `connection` (its endpoint and mode), with these options changed. */
export function duplicateRedis(
  connection: RedisClient,
  options: Pick<RedisOptions, 'enableOfflineQueue' | 'maxRetriesPerRequest'>,
): RedisClient {
  if (!(connection instanceof Cluster)) return connection.duplicate(options);
  const { enableOfflineQueue, maxRetriesPerRequest } = options;
  return connection.duplicate(undefined, {
    ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
    redisOptions: {
      ...connection.options.redisOptions,
      ...(maxRetriesPerRequest === undefined ? {} : { maxRetriesPerRequest }),
    },
  });
}

/**
 * `url` with its password replaced by `password` (any characters; percent-encoded here, as ioredis decodes
 * it), keeping any user name: how REDIS_PASSWORD overrides the password of REDIS_URL.
 */
export function withRedisPassword(url: string, password: string): string {
  const parsed = new URL(url);
  // The URL setter leaves '%' alone, so encode first: a password such as "50%off" must not read as an escape.
  parsed.password = encodeURIComponent(password);
  return parsed.toString();
}
