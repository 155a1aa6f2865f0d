import type { ApiPromise } from '@polkadot/api';
import type { Redis } from 'ioredis';

/**
 * Hands out the next nonce from the chain's view (KEYS[1] the counter, KEYS[2] the gap watch):
 * - below the chain's next index (others' transactions landed, or a restart): jump to the chain's;
 * - ahead of it while the chain's index does not move for `gapTimeoutMs`: a reserved nonce was never
 *   submitted (a crash between reserve and submit), so hand the chain's index out again to fill the gap.
 * ARGV: chain next index, now (ms), gap timeout (ms). Returns the reserved nonce.
 */
const RESERVE = `
local chain = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local stored = tonumber(redis.call('GET', KEYS[1]))
if stored == nil or stored <= chain then
  stored = chain
  redis.call('DEL', KEYS[2])
else
  local watch = redis.call('HMGET', KEYS[2], 'chain', 'since')
  if tonumber(watch[1]) ~= chain then
    redis.call('HSET', KEYS[2], 'chain', chain, 'since', now)
  elseif now - tonumber(watch[2]) > tonumber(ARGV[3]) then
    stored = chain
    redis.call('DEL', KEYS[2])
  end
end
redis.call('SET', KEYS[1], stored + 1)
return stored
`;

export interface NonceManagerOptions {
  /** Redis key prefix (CACHE_KEY_PREFIX). */
  prefix: string;
  /** How long the chain's next index may stand still behind handed-out nonces before the gap is refilled. */
  gapTimeoutMs?: number;
}

/**
 * Nonces for one signing account shared by every process that signs with it: reservations are atomic in
 * Redis, so two workers never get the same nonce, and they follow the chain (`system_accountNextIndex`,
 * which counts the node's ready pool) so that restarts, foreign transactions and lost reservations heal.
 */
export class NonceManager {
  private readonly counterKey: string;
  private readonly watchKey: string;

  constructor(
    private readonly redis: Redis,
    private readonly api: ApiPromise,
    private readonly account: string,
    private readonly options: NonceManagerOptions,
  ) {
    this.counterKey = `${options.prefix}:nonce:${account}`;
    this.watchKey = `${options.prefix}:nonce-gap:${account}`;
  }

  private async chainNext(): Promise<number> {
    return (await this.api.rpc.system.accountNextIndex(this.account)).toNumber();
  }

  /** The next nonce to sign with; never handed out twice unless the chain shows it was never used. */
  async reserve(): Promise<number> {
    const chain = await this.chainNext();
    const reserved = await this.redis.eval(
      RESERVE,
      2,
      this.counterKey,
      this.watchKey,
      String(chain),
      String(Date.now()),
      String(this.options.gapTimeoutMs ?? 30_000),
    );
    return Number(reserved);
  }

  /**
   * Starts again from the chain's next index, after the pool refused a nonce as stale ("Transaction is
   * outdated") or taken ("Priority is too low").
   */
  async resync(): Promise<void> {
    const chain = await this.chainNext();
    await this.redis.multi().set(this.counterKey, String(chain)).del(this.watchKey).exec();
  }
}
