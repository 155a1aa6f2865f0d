import type { RedisClient } from './connection.js';
import type { ReadinessCheck } from '../health/index.js';
import type { RedisAvailability, RedisFailure } from './availability.js';

const CONNECTING = new Set(['connecting', 'connect', 'wait']);

/**
 * A Redis PING over a fail-fast connection, so the check fails at once when Redis is away instead of
 * waiting for a reconnection. While the very first connection is still being made it waits for it rather
 * than report a false outage. When `availability` knows why the connection fails (Redis refused the
 * credentials, say), the check says that rather than the symptom ("Stream isn't writeable").
 */
export function redisCheck(connection: RedisClient, target: string, availability?: RedisAvailability): ReadinessCheck {
  return {
    name: 'redis',
    target,
    probe: async (signal) => {
      const told = (failure: RedisFailure) => new Error(`${failure.summary}: ${failure.detail}`);
      const known = availability?.failureOf(connection);
      if (known && connection.status !== 'ready') throw told(known);
      if (CONNECTING.has(connection.status)) {
        await new Promise<void>((resolve, reject) => {
          const settle = (outcome: () => void) => {
            connection.off('ready', ready);
            stopListening?.();
            outcome();
          };
          const ready = () => settle(resolve);
          // A first connection that is refused says so now, rather than the check timing out.
          const stopListening = availability?.onFailure(connection, (failure) => settle(() => reject(told(failure))));
          connection.once('ready', ready);
          signal.addEventListener('abort', () => settle(resolve), { once: true });
        });
      }
      await connection.ping();
    },
  };
}
