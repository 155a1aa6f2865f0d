import type { Redis } from 'ioredis';
import type { ReadinessCheck } from '../health/index.js';

const CONNECTING = new Set(['connecting', 'connect', 'wait']);

/**
 * A Redis PING over a fail-fast connection, so the check fails at once when Redis is away instead of
 * waiting for a reconnection. While the very first connection is still being made it waits for it rather
 * than report a false outage.
 */
export function redisCheck(connection: Redis, target: string): ReadinessCheck {
  return {
    name: 'redis',
    target,
    probe: async (signal) => {
      if (CONNECTING.has(connection.status)) {
        await new Promise<void>((resolve) => {
          connection.once('ready', resolve);
          signal.addEventListener('abort', () => (connection.off('ready', resolve), resolve()), { once: true });
        });
      }
      await connection.ping();
    },
  };
}
