import { Cluster } from 'ioredis';
import { connectionFor, type RedisClient } from './connection.js';

/**
 * How many replicas a write must reach: every replica in sync with the primary when it is confirmed, and at least
 * `replicas`; and how long to wait for them.
 */
export interface Durability {
  replicas: number;
  timeoutMs: number;
}

/** Writes reached fewer replicas than acknowledged = durable asks for, in the time it allows. */
export class NotReplicatedError extends Error {
  constructor(reached: number, needed: number, durability: Durability) {
    super(
      `the write reached ${reached} of the ${needed} Redis replicas it needs within ${durability.timeoutMs} ms (REDIS_DURABILITY=replicated)`,
    );
    this.name = 'NotReplicatedError';
  }
}

/**
 * A connection was lost while the writes were made: they may have gone to a primary that died before any
 * replica had them (and the commands after the loss went to its successor), so they cannot be confirmed.
 */
export class WritesMayBeLostError extends Error {
  constructor() {
    super('a Redis connection was lost while the writes were made: they may be gone with the old primary');
    this.name = 'WritesMayBeLostError';
  }
}

/**
 * Acknowledged = durable for what a worker writes: `confirm` resolves only once every write made so far on the
 * given connections reached every replica in sync with the primary, and at least `replicas` (WAIT on each, for as
 * many as INFO names in sync: the Sentinels may promote any of them), and only when none of the connections was lost
 * since `mark` was taken. A WAIT that follows a reconnection to a newly promoted primary answers at once and
 * says nothing about writes the old primary took with it; the connection's loss does.
 *
 * A job confirms its writes before it completes, and a transaction's record is confirmed before the
 * transaction is submitted: a failover then loses neither, and what could not be confirmed is done again.
 */
export class ReplicatedWrites {
  private losses = 0;

  constructor(
    private readonly connections: RedisClient[],
    private readonly durability: Durability,
    /** A key of the keyspace the writes go to: on a Redis Cluster, WAIT goes to the primary of its slot. */
    private readonly key: string,
  ) {
    for (const connection of connections) {
      const lost = () => this.losses++;
      connection.on('close', lost);
      if (connection instanceof Cluster) connection.on('-node', lost);
    }
  }

  /** Where confirmation starts: a connection lost after this makes `confirm(mark)` fail. */
  mark(): number {
    return this.losses;
  }

  async confirm(mark: number): Promise<void> {
    const { replicas, timeoutMs } = this.durability;
    const answers = await Promise.all(
      this.connections.map(async (connection) => {
        const node = await connectionFor(connection, this.key);
        // Every replica in sync now, so that whichever one the Sentinels promote has the writes.
        const needed = Math.max(replicas, await replicasInSync(node));
        return { needed, reached: await node.wait(needed, timeoutMs) };
      }),
    );
    // After the WAITs: a connection that died under them made them fail, or closed before their answers came.
    if (this.losses !== mark) throw new WritesMayBeLostError();
    const short = answers.find(({ needed, reached }) => reached < needed);
    if (short) throw new NotReplicatedError(short.reached, short.needed, this.durability);
  }
}

/** How many replicas of the primary `node` are connected and in sync (`state=online`). */
async function replicasInSync(node: RedisClient): Promise<number> {
  return (await node.info('replication')).match(/^slave\d+:.*state=online/gm)?.length ?? 0;
}

/** The durability REDIS_DURABILITY and REDIS_DURABILITY_TIMEOUT_MS ask for; undefined: acknowledged by the primary. */
export function durabilityOf(config: {
  REDIS_DURABILITY: 'acknowledged' | 'replicated';
  REDIS_DURABILITY_TIMEOUT_MS: number;
}): Durability | undefined {
  return config.REDIS_DURABILITY === 'replicated'
    ? { replicas: 1, timeoutMs: config.REDIS_DURABILITY_TIMEOUT_MS }
    : undefined;
}
