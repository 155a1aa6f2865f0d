import { Cluster } from 'ioredis';
import type { RedisClient } from './connection.js';

/**
 * Every key matching `pattern`, by SCAN. A Redis Cluster answers SCAN per node, so there each primary is
 * scanned in turn: a pattern under one hash tag lives on one of them, whichever it is.
 */
export async function* scanKeys(redis: RedisClient, pattern: string): AsyncGenerator<string> {
  const servers = redis instanceof Cluster ? redis.nodes('master') : [redis];
  for (const server of servers) {
    let cursor = '0';
    do {
      const [next, keys] = await server.scan(cursor, 'MATCH', pattern, 'COUNT', 100);
      cursor = next;
      yield* keys;
    } while (cursor !== '0');
  }
}
