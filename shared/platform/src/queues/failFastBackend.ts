import {
  QueueKeys,
  RedisConnection,
  RedisQueueBackend,
  type BackendFactory,
  type RedisClient as BullClient,
} from 'bullmq';
import type { RedisClient } from '../redis/connection.js';
import { RedisUnavailableError, type RedisAvailability } from '../redis/index.js';

/**
 * BullMQ's connection wrapper waits for the client's first `ready` before any command, without limit: while
 * Redis refuses the credentials (or cannot be reached) from the start, every `queue.add`, `getJob` and the
 * queue board's reads would hang. This one fails them at once with the reason as soon as the connection is
 * known to fail, and still waits while the first connection is merely under way.
 */
class FailFastConnection extends RedisConnection {
  constructor(
    private readonly raw: RedisClient,
    private readonly availability: RedisAvailability,
  ) {
    super(raw, { shared: true, blocking: false });
  }

  override get client(): Promise<BullClient> {
    const initialized = super.client;
    // Once initialized, commands go to the fail-fast ioredis client, which refuses them itself while it is down.
    if (this.status === 'ready') return initialized;
    const known = this.availability.failureOf(this.raw);
    if (known) return Promise.reject(new RedisUnavailableError(known));
    return new Promise<BullClient>((resolve, reject) => {
      const stop = this.availability.onFailure(this.raw, (failure) => reject(new RedisUnavailableError(failure)));
      initialized.then(
        (client) => (stop(), resolve(client)),
        (error: unknown) => (stop(), reject(error)),
      );
    });
  }
}

/**
 * The backend of producer queues (never blocking) on one shared fail-fast ioredis connection under `prefix` (the
 * queues' own `prefix` option, which the backend reads too), as BullMQ's default Redis backend builds it, with
 * the connection wrapper above.
 */
export function failFastBackend(
  connection: RedisClient,
  availability: RedisAvailability,
  prefix: string,
): BackendFactory<RedisQueueBackend> {
  return (name, opts) => {
    const keys = new QueueKeys(prefix);
    return new RedisQueueBackend(
      new FailFastConnection(connection, availability),
      name,
      keys.getKeys(name),
      (type) => keys.toKey(name, type),
      opts,
    );
  };
}
