import { hostname } from 'node:os';
import type { RedisClient } from '../redis/connection.js';
import { Gauge, type Registry } from 'prom-client';
import type { InCluster } from '../kubernetes/index.js';
import {
  KubernetesLeaseLock,
  leaseObjectName,
  RedisLeaseLock,
  runAsLeader,
  type LeaderLoop,
  type Leadership,
  type LeaseLock,
  type LeaseStatus,
} from '../leader/index.js';
import type { Logger } from '../logging/index.js';
import type { CommonConfig } from './variables.js';

export interface Leaders {
  /** Runs `loop` on one replica of the deployment at a time; watched for stalls when it reports its progress. */
  lead(name: string, loop: LeaderLoop, options?: { reportsProgress?: boolean }): Leadership;
  /** The leases whose loop this replica led is stuck (see runAsLeader). */
  stalled(): string[];
  /** Where this replica stands on each lease it contends for (for /healthz). */
  statuses(): Record<string, LeaseStatus>;
  /** Stops every loop and releases every lease. */
  stopAll(): Promise<void>;
}

function lockFor(name: string, config: CommonConfig, redis: RedisClient, cluster: InCluster | undefined): LeaseLock {
  // Inside a cluster, with the pod's identity from the downward API, use a Kubernetes Lease.
  if (cluster) {
    const object = leaseObjectName(
      [config.LEADER_LEASE_PREFIX, config.CACHE_KEY_PREFIX, name].filter(Boolean).join('-'),
    );
    return new KubernetesLeaseLock(cluster.kubeConfig, cluster.pod.namespace, object);
  }
  return new RedisLeaseLock(redis, config.CACHE_KEY_PREFIX, name);
}

/**
 * Leader election for a component: the lock that fits where it runs (a Kubernetes Lease when `cluster` says it
 * runs in one, Redis otherwise), its timing from the configuration, a gauge.
 */
export function createLeaders(
  config: CommonConfig,
  redis: RedisClient,
  logger: Logger,
  metrics: Registry,
  cluster: InCluster | undefined,
): Leaders {
  const gauge = new Gauge({
    name: 'leader_is_leader',
    help: '1 while this replica holds the lease of a once-per-deployment loop',
    labelNames: ['lease'],
    registers: [metrics],
  });
  const identity = config.POD_NAME ?? `${hostname()}-${process.pid}`;
  const timing = {
    leaseDurationMs: config.LEADER_LEASE_DURATION_MS,
    renewDeadlineMs: config.LEADER_RENEW_DEADLINE_MS,
    retryPeriodMs: config.LEADER_RETRY_PERIOD_MS,
  };
  const all: { name: string; leadership: Leadership }[] = [];
  return {
    lead: (name, loop, options = {}) => {
      gauge.set({ lease: name }, 0);
      const onLeadershipChange = (leading: boolean) => gauge.set({ lease: name }, leading ? 1 : 0);
      const leadership = runAsLeader(
        {
          name,
          identity,
          lock: lockFor(name, config, redis, cluster),
          logger,
          timing,
          onLeadershipChange,
          ...(options.reportsProgress ? { stallAfterMs: config.LEADER_STALL_MS } : {}),
        },
        loop,
      );
      all.push({ name, leadership });
      return leadership;
    },
    statuses: () => Object.fromEntries(all.map(({ name, leadership }) => [name, leadership.status()])),
    stalled: () => all.filter(({ leadership }) => leadership.stalled()).map(({ name }) => name),
    stopAll: async () => {
      await Promise.all(all.map(({ leadership }) => leadership.stop()));
    },
  };
}
