import { Redis, type RedisOptions } from 'ioredis';

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

/**
 * Opens a connection that starts connecting at once and keeps reconnecting. Connection errors are not
 * logged here: an outage is reported once, by the readiness controller, instead of on every retry.
 */
export function openRedis(url: string, mode: RedisMode = 'queued'): Redis {
  const connection = new Redis(url, { ...MODES[mode], lazyConnect: true });
  connection.on('error', () => undefined);
  void connection.connect().catch(() => undefined);
  return connection;
}

/** `redis://host:port/db` with any credentials left out: safe for health output. */
export function redisTarget(url: string): string {
  const parsed = new URL(url);
  const port = parsed.port ? `:${parsed.port}` : '';
  const db = parsed.pathname === '/' ? '' : parsed.pathname;
  return `${parsed.protocol}//${parsed.hostname}${port}${db}`;
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
