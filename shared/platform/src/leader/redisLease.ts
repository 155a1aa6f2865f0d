import type { RedisClient } from '../redis/connection.js';
import { RedisScript } from '../redis/script.js';
import type { LeaseAttempt, LeaseLock } from './lease.js';

const ACQUIRE_OR_RENEW = RedisScript.fromFile(new URL('./acquireOrRenewLease.lua', import.meta.url), 2);
const RELEASE = RedisScript.fromFile(new URL('./releaseLease.lua', import.meta.url), 1);

/** A lease kept in Redis: `<prefix>:lease:<name>` with a server-side expiry and a fencing counter. */
export class RedisLeaseLock implements LeaseLock {
  readonly description: string;
  private readonly key: string;
  private readonly fenceKey: string;

  constructor(
    private readonly redis: RedisClient,
    keyPrefix: string,
    name: string,
  ) {
    this.key = `${keyPrefix}:lease:${name}`;
    this.fenceKey = `${this.key}:fence`;
    this.description = `redis ${this.key}`;
  }

  async tryAcquireOrRenew(identity: string, leaseDurationMs: number): Promise<LeaseAttempt> {
    const [held, holder, token] = (await ACQUIRE_OR_RENEW.run(
      this.redis,
      [this.key, this.fenceKey],
      [identity, leaseDurationMs],
    )) as [number, string, number];
    return { held: held === 1, holder, token };
  }

  async release(identity: string): Promise<void> {
    await RELEASE.run(this.redis, [this.key], [identity]);
  }
}
