import { startRedisCluster, type LocalRedisCluster } from './redisCluster.js';
import { startRedisSentinelGroup, type LocalRedisSentinelGroup } from './redisSentinel.js';
import { startRedisServer, type LocalRedis, type RedisServerOptions } from './redisServer.js';

/**
 * One redis-server, a 3-primary Redis Cluster, or a primary with 4 replicas and 3 Sentinels (enough replicas for a
 * failover drill that kills the primary, then two primaries in a row, on one group).
 */
export type RedisBackingMode = 'single' | 'cluster' | 'sentinel';

/** The Redis a test stack's components share, in one of the modes the gateway runs on. */
export interface LocalRedisBacking {
  /** The redis-server (a cluster's first node; a Sentinel group's primary at the start). */
  redis: LocalRedis;
  /** In mode `cluster`, the cluster. */
  cluster: LocalRedisCluster | undefined;
  /** In mode `sentinel`, the primary, its replicas and their Sentinels. */
  sentinel: LocalRedisSentinelGroup | undefined;
  /** How the components reach it: REDIS_URL, and REDIS_CLUSTER_NODES or REDIS_SENTINELS and REDIS_SENTINEL_NAME. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/** Starts Redis in `mode`; a single server takes `single` (e.g. an append-only file). */
export async function startRedisBacking(
  mode: RedisBackingMode = 'single',
  single: RedisServerOptions = {},
): Promise<LocalRedisBacking> {
  if (mode === 'cluster') {
    const cluster = await startRedisCluster();
    const redis = cluster.nodes[0] as LocalRedis;
    return {
      redis,
      cluster,
      sentinel: undefined,
      env: { REDIS_URL: redis.url, REDIS_CLUSTER_NODES: cluster.seeds },
      stop: () => cluster.stop(),
    };
  }
  if (mode === 'sentinel') {
    const sentinel = await startRedisSentinelGroup({ replicas: 4 });
    const redis = sentinel.servers[0] as LocalRedis;
    return {
      redis,
      cluster: undefined,
      sentinel,
      env: { REDIS_URL: redis.url, REDIS_SENTINELS: sentinel.sentinelNodes, REDIS_SENTINEL_NAME: sentinel.name },
      stop: () => sentinel.stop(),
    };
  }
  const redis = await startRedisServer(single);
  return { redis, cluster: undefined, sentinel: undefined, env: { REDIS_URL: redis.url }, stop: () => redis.stop() };
}
