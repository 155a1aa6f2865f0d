import type { Redis } from 'ioredis';
import type { RateWindow } from '../http/rateLimit.js';
import { RedisScript } from './script.js';

// KEYS: the client's counter. ARGV: window (ms).
// The first request of a window creates the counter with the window as its expiry; the ones after count up. A
// counter found without expiry (it cannot happen through this script, but a key restored without its TTL could
// pin a client forever) gets one. Answers the count and the milliseconds left in the window.
const HIT = new RedisScript(
  `
local counter, window = KEYS[1], ARGV[1]
local count = redis.call('INCR', counter)
if count == 1 then redis.call('PEXPIRE', counter, window) end
local left = redis.call('PTTL', counter)
if left < 0 then
  redis.call('PEXPIRE', counter, window)
  left = tonumber(window)
end
return {count, left}
`,
  1,
);

/** Request counters for the rate limit, at `<prefix>:ratelimit:<client>`, shared by every replica. */
export class RedisRateWindow implements RateWindow {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  async hit(client: string, windowMs: number): Promise<{ count: number; resetInMs: number }> {
    const [count, left] = (await HIT.run(this.redis, [`${this.prefix}:ratelimit:${client}`], [windowMs])) as [
      number,
      number,
    ];
    return { count, resetInMs: left };
  }
}
