import type { Redis } from 'ioredis';
import type { LeaseAttempt, LeaseLock } from './lease.js';

// KEYS: lease hash, fencing counter. ARGV: identity, duration (ms).
// The lease is a hash {holder, token} whose TTL is the lease duration: Redis itself expires a dead leader.
const ACQUIRE_OR_RENEW = `
local holder = redis.call('HGET', KEYS[1], 'holder')
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1, holder, tonumber(redis.call('HGET', KEYS[1], 'token'))}
end
if holder then
  return {0, holder, tonumber(redis.call('HGET', KEYS[1], 'token'))}
end
local token = redis.call('INCR', KEYS[2])
redis.call('HSET', KEYS[1], 'holder', ARGV[1], 'token', token)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {1, ARGV[1], token}
`;

const RELEASE = `
if redis.call('HGET', KEYS[1], 'holder') == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/** A lease kept in Redis: `<prefix>:lease:<name>` with a server-side expiry and a fencing counter. */
export class RedisLeaseLock implements LeaseLock {
  readonly description: string;
  private readonly key: string;
  private readonly fenceKey: string;

  constructor(
    private readonly redis: Redis,
    keyPrefix: string,
    name: string,
  ) {
    this.key = `${keyPrefix}:lease:${name}`;
    this.fenceKey = `${this.key}:fence`;
    this.description = `redis ${this.key}`;
  }

  async tryAcquireOrRenew(identity: string, leaseDurationMs: number): Promise<LeaseAttempt> {
    const [held, holder, token] = (await this.redis.eval(
      ACQUIRE_OR_RENEW,
      2,
      this.key,
      this.fenceKey,
      identity,
      String(leaseDurationMs),
    )) as [number, string, number];
    return { held: held === 1, holder, token };
  }

  async release(identity: string): Promise<void> {
    await this.redis.eval(RELEASE, 1, this.key, identity);
  }
}
