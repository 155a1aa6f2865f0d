import { hostname } from 'node:os';
import { KubeConfig } from '@kubernetes/client-node';
import { Redis } from 'ioredis';
import { Gauge, type Registry } from 'prom-client';
import { loadConfigOrExit, parseConfig, secretValues, type ConfigOf, type ConfigSpec } from '../config/index.js';
import { EventLoopWatch, healthRoutes, ReadinessController } from '../health/index.js';
import { createHttpApp, listen, type Mount, type Route, type RunningServer } from '../http/index.js';
import {
  KubernetesLeaseLock,
  leaseObjectName,
  RedisLeaseLock,
  runAsLeader,
  type LeaderLoop,
  type Leadership,
  type LeaseLock,
} from '../leader/index.js';
import { Shutdown } from '../lifecycle/index.js';
import { createLogger, type Logger } from '../logging/index.js';
import { createMetricsRegistry, metricsRoute } from '../metrics/index.js';
import { JobQueues, queueBoard } from '../queues/index.js';
import { redisCheck } from './redisTarget.js';
import type { CommonConfig } from './variables.js';

/** What the platform hands a component's setup: everything already connected and instrumented. */
export interface ComponentRuntime<C> {
  config: C;
  logger: Logger;
  /** Shared Redis connection for the component's own keys. */
  redis: Redis;
  queues: JobQueues;
  readiness: ReadinessController;
  metrics: Registry;
  shutdown: Shutdown;
  /** Runs `loop` on one replica of the deployment at a time (see runAsLeader). */
  lead(name: string, loop: LeaderLoop): Leadership;
}

export interface ComponentParts {
  routes?: Route[];
  /** Serve bull-board at /queues for the component's queues (api components). */
  queueBoard?: boolean;
  /** Runs during shutdown after HTTP has stopped and before queues close. */
  stop?: () => Promise<void>;
}

export interface ComponentDefinition<S extends ConfigSpec> {
  name: string;
  title: string;
  description: string;
  version: string;
  config: S;
  /** The variable holding the HTTP port. */
  portVariable: keyof S & string;
  setup(runtime: ComponentRuntime<ConfigOf<S>>): Promise<ComponentParts> | ComponentParts;
}

export interface StartOptions {
  env?: NodeJS.ProcessEnv;
  /** Install SIGTERM/SIGINT handlers that shut down and exit (true in a real process). */
  handleSignals?: boolean;
  /** Overrides the configured port (0 picks a free one; tests use it). */
  port?: number;
  /** Where log lines go; stdout by default. */
  logDestination?: NodeJS.WritableStream;
}

export interface StartedComponent<C> {
  runtime: ComponentRuntime<C>;
  server: RunningServer;
  url: string;
  /** Shuts down as on SIGTERM; resolves to the exit code the process would use. */
  stop(): Promise<number>;
}

function leaseLockFor(name: string, config: CommonConfig, redis: Redis): LeaseLock {
  const inCluster = config.POD_NAME && config.POD_NAMESPACE && process.env.KUBERNETES_SERVICE_HOST;
  if (inCluster) {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromCluster();
    return new KubernetesLeaseLock(
      kubeConfig,
      config.POD_NAMESPACE as string,
      leaseObjectName(`${config.CACHE_KEY_PREFIX}-${name}`),
    );
  }
  return new RedisLeaseLock(redis, config.CACHE_KEY_PREFIX, name);
}

/**
 * The composition root shared by every component: parses configuration (exiting with every problem when it
 * is invalid), then builds logging, metrics, Redis, readiness, queues, leases and the HTTP surface, runs
 * the component's own setup, listens, and wires the ordered shutdown.
 */
export async function startComponent<S extends ConfigSpec>(
  definition: ComponentDefinition<S>,
  options: StartOptions = {},
): Promise<StartedComponent<ConfigOf<S>>> {
  const env = options.env ?? process.env;
  const config = options.handleSignals
    ? loadConfigOrExit(definition.config, env, definition.name)
    : parseConfig(definition.config, env);
  const common = config as unknown as CommonConfig;
  const logger = createLogger({
    component: definition.name,
    level: common.LOG_LEVEL,
    pretty: common.LOG_PRETTY,
    secrets: secretValues(definition.config, config),
    ...(options.logDestination ? { destination: options.logDestination } : {}),
  });
  const startedAt = new Date();
  const metrics = createMetricsRegistry(definition.name);
  const shutdown = new Shutdown({ logger, graceMs: common.SHUTDOWN_GRACE_MS });

  const redis = new Redis(common.REDIS_URL, { lazyConnect: true });
  redis.on('error', () => undefined);
  void redis.connect().catch(() => undefined);
  const leaseRedis = new Redis(common.REDIS_URL, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    lazyConnect: true,
  });
  leaseRedis.on('error', () => undefined);
  void leaseRedis.connect().catch(() => undefined);

  const readiness = new ReadinessController({
    logger,
    metrics,
    intervalMs: common.READINESS_INTERVAL_MS,
    timeoutMs: common.READINESS_TIMEOUT_MS,
  });
  const redisProbe = redisCheck(common.REDIS_URL);
  readiness.add(redisProbe.check);
  const queues = new JobQueues({ redisUrl: common.REDIS_URL, keyPrefix: common.CACHE_KEY_PREFIX, logger, metrics });

  const leaderGauge = new Gauge({
    name: 'leader_is_leader',
    help: '1 while this replica holds the lease of a once-per-deployment loop',
    labelNames: ['lease'],
    registers: [metrics],
  });
  const leaderships: Leadership[] = [];
  const identity = common.POD_NAME ?? `${hostname()}-${process.pid}`;
  const lead = (name: string, loop: LeaderLoop): Leadership => {
    leaderGauge.set({ lease: name }, 0);
    const leadership = runAsLeader(
      {
        name,
        identity,
        lock: leaseLockFor(name, common, leaseRedis),
        logger,
        timing: {
          leaseDurationMs: common.LEADER_LEASE_DURATION_MS,
          renewDeadlineMs: common.LEADER_RENEW_DEADLINE_MS,
          retryPeriodMs: common.LEADER_RETRY_PERIOD_MS,
        },
        onLeadershipChange: (leading) => leaderGauge.set({ lease: name }, leading ? 1 : 0),
      },
      loop,
    );
    leaderships.push(leadership);
    return leadership;
  };

  const runtime: ComponentRuntime<ConfigOf<S>> = { config, logger, redis, queues, readiness, metrics, shutdown, lead };
  const parts = await definition.setup(runtime);

  const eventLoop = new EventLoopWatch(common.LIVENESS_MAX_EVENT_LOOP_DELAY_MS);
  const api = config as unknown as { QUEUES_UI?: boolean; QUEUES_BASIC_AUTH?: string; HTTP_JSON_LIMIT?: string };
  const mounts: Mount[] = [];
  if (parts.queueBoard && api.QUEUES_UI !== false) {
    mounts.push(
      queueBoard(queues.all(), {
        path: '/queues',
        ...(api.QUEUES_BASIC_AUTH ? { basicAuth: api.QUEUES_BASIC_AUTH } : {}),
      }),
    );
  }
  const { app } = createHttpApp({
    logger,
    metrics,
    info: { title: definition.title, version: definition.version, description: definition.description },
    routes: [
      ...healthRoutes({ component: definition.name, version: definition.version, readiness, eventLoop, startedAt }),
      metricsRoute(metrics),
      ...(parts.routes ?? []),
    ],
    mounts,
    ...(api.HTTP_JSON_LIMIT ? { jsonLimit: api.HTTP_JSON_LIMIT } : {}),
  });
  readiness.start();
  const port = options.port ?? Number((config as Record<string, unknown>)[definition.portVariable]);
  const server = await listen(app, port);
  logger.info({ port: server.port, version: definition.version }, `${definition.name} listening`);

  shutdown
    .step('stop reporting ready', () => readiness.markShuttingDown())
    .step('stop HTTP', (remainingMs) => server.close(remainingMs))
    .step('stop leader loops', () => Promise.all(leaderships.map((leadership) => leadership.stop())))
    .step('stop component', () => parts.stop?.())
    .step('drain workers and close queues', (remainingMs) => queues.close(Math.max(0, remainingMs - 1000)))
    .step('close connections', () => {
      readiness.stop();
      eventLoop.stop();
      for (const connection of [redis, leaseRedis, redisProbe.connection]) connection.disconnect();
    });
  if (options.handleSignals) shutdown.installSignalHandlers();

  return { runtime, server, url: server.url, stop: () => shutdown.run('stop requested') };
}
