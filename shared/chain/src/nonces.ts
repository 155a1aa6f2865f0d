import type { ApiPromise } from '@polkadot/api';
import { RedisScript } from '@frequency-gateway/platform';
import type { RedisClient } from '@frequency-gateway/platform';
import { ChainTiming } from './timing.js';

const RESERVE = RedisScript.fromFile(new URL('./reserveNonce.lua', import.meta.url), 2);

/**
 * Where the services keep the nonces of the keys they sign with: one keyspace for all of them, not each service's
 * own, because the services of a gateway sign with the same provider key. Each following only the chain's next
 * index would hand out a nonce the other holds whenever the node loses its pool (a restart): the next index then
 * falls back below what is reserved.
 */
export const SIGNING_KEYSPACE = '{signing}';

export interface NonceManagerOptions {
  /** Redis key prefix: SIGNING_KEYSPACE, shared by every service that signs with the same key. */
  prefix: string;
  /**
   * The timing contract (default ChainTiming.DEFAULT): its `gapRefillMs` is how long the chain's next index may
   * stand still behind handed-out nonces before the gap is refilled.
   */
  timing?: ChainTiming;
}

/**
 * Nonces for one signing account shared by every process (of every service) that signs with it: reservations are atomic in
 * Redis, so two workers never get the same nonce, and they follow the chain (`system_accountNextIndex`,
 * which counts the node's ready pool) so that restarts, foreign transactions and lost reservations heal.
 */
export class NonceManager {
  private readonly counterKey: string;
  private readonly watchKey: string;

  constructor(
    private readonly redis: RedisClient,
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

  private async run(mode: 'reserve' | 'gap'): Promise<number> {
    const chain = await this.chainNext();
    const gapRefillMs = (this.options.timing ?? ChainTiming.DEFAULT).gapRefillMs;
    return Number(
      await RESERVE.run(this.redis, [this.counterKey, this.watchKey], [chain, Date.now(), gapRefillMs, mode]),
    );
  }

  /** The next nonce to sign with; never handed out twice unless the chain shows it was never used. */
  async reserve(): Promise<number> {
    return this.run('reserve');
  }

  /**
   * The nonce of a gap the chain's next index has stood still behind for `gapRefillMs` (a nonce reserved and never
   * submitted), answered to one caller, which fills it; undefined when there is none. Checked now and then, it
   * frees what waits behind a gap even when no more reservations come (reserve() refills one only then).
   */
  async standingGap(): Promise<number | undefined> {
    const gap = await this.run('gap');
    return gap < 0 ? undefined : gap;
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
