import type { ApiPromise } from '@polkadot/api';
import type { ChainableCommander } from 'ioredis';
import type { Logger, RedisClient } from '@frequency-gateway/platform';
import type { PendingRecord, TrackerKeys } from './records.js';

/**
 * What the scan keeps with TRUST_UNFINALIZED_BLOCKS, where it settles outcomes from best blocks that a
 * reorganisation may retract: the hash of each block scanned and each record settled, until that block is final.
 * The scanned hashes form one chain (each block's parent the one scanned before it, see `follows`), so that the
 * highest still on the chain vouches for all below it.
 */
export class Retractions {
  constructor(
    private readonly api: ApiPromise,
    private readonly redis: RedisClient,
    private readonly keys: TrackerKeys,
    private readonly logger?: Pick<Logger, 'warn'>,
  ) {}

  /** Adds to `settling` the keeping of a record settled from best block `block`, with its jobs. */
  keep(settling: ChainableCommander, txHash: string, record: PendingRecord, jobs: string[], block: number): void {
    settling.hset(this.keys.provisional, txHash, JSON.stringify({ record, jobs, block }));
  }

  /** The hash kept for block `number`, if it was scanned and is not yet forgotten. */
  async scannedHash(number: number): Promise<string | null> {
    return this.redis.hget(this.keys.scannedHashes, String(number));
  }

  /** Block `number`, of hash `hash`, was scanned. */
  async scanned(number: number, hash: string): Promise<void> {
    await this.redis.hset(this.keys.scannedHashes, String(number), hash);
  }

  /** Whether block `hash` is a child of `parent` (null: nothing kept to compare, so it is taken as one). */
  async follows(hash: string, parent: string | null): Promise<boolean> {
    return parent === null || (await this.api.rpc.chain.getHeader(hash)).parentHash.toHex() === parent;
  }

  /**
   * Before each round: when a best block scanned was retracted (its number now holds another hash), the scan goes
   * back to the fork point, and every record settled from a retracted block is pending again, so that the scan
   * settles it from the chain that replaced it (or its era, or the resubmission, decides). Blocks and records at or
   * below the finalized head that are still on the chain are final and forgotten.
   */
  async rewind(): Promise<void> {
    const { chain } = this.api.rpc;
    const finalized = (await chain.getHeader(await chain.getFinalizedHead())).number.toNumber();
    const stored = await this.redis.hgetall(this.keys.scannedHashes);
    const numbers = Object.keys(stored)
      .map(Number)
      .sort((a, b) => b - a);
    let fork: number | undefined;
    for (const number of numbers) {
      if ((await chain.getBlockHash(number)).toHex() === stored[String(number)]) break;
      fork = number;
    }
    const provisional = await this.redis.hgetall(this.keys.provisional);
    const reopened: string[] = [];
    const changes = this.redis.multi();
    for (const [txHash, json] of Object.entries(provisional)) {
      const { record, jobs, block } = JSON.parse(json) as { record: PendingRecord; jobs: string[]; block: number };
      if (fork !== undefined && block >= fork) {
        changes.hset(this.keys.pending, txHash, JSON.stringify(record)).del(this.keys.settled(txHash));
        if (jobs.length > 0) changes.sadd(this.keys.jobs(txHash), ...jobs);
        changes.hdel(this.keys.provisional, txHash);
        reopened.push(txHash);
      } else if (block <= finalized) changes.hdel(this.keys.provisional, txHash);
    }
    for (const number of numbers)
      if ((fork !== undefined && number >= fork) || number < finalized)
        changes.hdel(this.keys.scannedHashes, String(number));
    if (fork !== undefined) changes.set(this.keys.scanned, String(fork - 1));
    await changes.exec();
    if (fork !== undefined)
      this.logger?.warn(
        { fork, reopened },
        `best blocks from #${fork} on were retracted: scanning again from there, ${reopened.length} outcomes settled from them open again`,
      );
  }
}
