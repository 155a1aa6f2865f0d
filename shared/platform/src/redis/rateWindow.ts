import type { RedisClient } from './connection.js';
import type { RateWindow } from '../http/rateLimit.js';
import { RedisScript } from './script.js';

const HIT = RedisScript.fromFile(new URL('./rateWindowHit.lua', import.meta.url), 1);

/** Request counters for the rate limit, at `<prefix>:ratelimit:<client>`, shared by every replica. */
export class RedisRateWindow implements RateWindow {
  constructor(
    private readonly redis: RedisClient,
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
