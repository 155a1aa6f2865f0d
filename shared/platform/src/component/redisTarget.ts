import { Redis } from 'ioredis';
import type { ReadinessCheck } from '../health/index.js';

/** `redis://host:port/db` with any credentials left out: safe for health output. */
export function redisTarget(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.hostname}${parsed.port ? `:${parsed.port}` : ''}${parsed.pathname === '/' ? '' : parsed.pathname}`;
}

/**
 * A Redis PING on a connection of its own that never queues commands while disconnected, so the check
 * fails at once when Redis is away instead of waiting for a reconnection.
 */
export function redisCheck(url: string): { check: ReadinessCheck; connection: Redis } {
  const connection = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: true });
  connection.on('error', () => undefined);
  void connection.connect().catch(() => undefined);
  return {
    connection,
    check: {
      name: 'redis',
      target: redisTarget(url),
      probe: async (signal) => {
        if (connection.status === 'end') void connection.connect().catch(() => undefined);
        if (connection.status === 'connecting' || connection.status === 'connect' || connection.status === 'wait') {
          // Still establishing the first connection: wait for it rather than report a false outage.
          await new Promise<void>((resolve) => {
            connection.once('ready', resolve);
            signal.addEventListener('abort', () => (connection.off('ready', resolve), resolve()), { once: true });
          });
        }
        await connection.ping();
      },
    },
  };
}
