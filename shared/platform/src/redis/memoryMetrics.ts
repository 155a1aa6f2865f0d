import { Cluster, type Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import { registerScrapedGauges } from '../metrics/index.js';
import type { RedisClient } from './connection.js';

interface Memory {
  used?: number;
  max?: number;
}

/** `INFO memory` field as a number; undefined when absent. */
function infoField(info: string, field: string): number | undefined {
  const match = new RegExp(`^${field}:(\\d+)\\r?$`, 'm').exec(info);
  return match ? Number(match[1]) : undefined;
}

/**
 * Redis memory as the gateway's own connection sees it, read at scrape time with `INFO memory`: used bytes and
 * the `maxmemory` limit (0 when none is set). An alert on memory near the limit then needs no redis_exporter;
 * BullMQ and the intake stream refuse writes once Redis is full, so this is what warns before requests fail.
 */
export function registerRedisMemoryGauges(registry: Registry, redis: RedisClient): void {
  registerScrapedGauges<Memory>(
    registry,
    [
      {
        name: 'redis_memory_used_bytes',
        help: 'Memory Redis uses (INFO memory used_memory), read at scrape time',
        field: 'used',
      },
      {
        name: 'redis_memory_max_bytes',
        help: "Redis's memory limit (INFO memory maxmemory; 0: no limit), read at scrape time",
        field: 'max',
      },
    ],
    async () => {
      if (!(redis instanceof Cluster)) return memoryOf(redis);
      // A cluster: the primary closest to its limit (each primary has its own), else the one that uses most.
      const primaries = await Promise.all(redis.nodes('master').map(memoryOf));
      const fill = (node: Memory) => (node.max ? (node.used ?? 0) / node.max : 0);
      return primaries.reduce<Memory | undefined>(
        (worst, node) =>
          !worst || fill(node) > fill(worst) || (fill(node) === fill(worst) && (node.used ?? 0) > (worst.used ?? 0))
            ? node
            : worst,
        undefined,
      );
    },
  );
}

async function memoryOf(redis: Redis): Promise<Memory> {
  const info = await redis.info('memory');
  return { used: infoField(info, 'used_memory'), max: infoField(info, 'maxmemory') };
}
