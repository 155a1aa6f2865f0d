import type { KubeConfig } from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import { loadConfigOrExit, readConfig, secretValues, type ConfigOf, type ConfigSpec } from '../config/index.js';
import { EventLoopWatch, healthRoutes, ReadinessController, StartupWatch } from '../health/index.js';
import {
  createHttpApp,
  listen,
  metricsRoute,
  type ApiToken,
  type Mount,
  type Route,
  type RunningServer,
  type TrustProxy,
  type WebhookSpec,
} from '../http/index.js';
import { inCluster, KubernetesPodEvents, recordReadinessEvents } from '../kubernetes/index.js';
import type { LeaderLoop, Leadership, LeaseStatus } from '../leader/index.js';
import { guardProcess, Shutdown } from '../lifecycle/index.js';
import { createLogger, routeConsoleToLogger, secretScrubber, type Logger } from '../logging/index.js';
import { createMetricsRegistry } from '../metrics/index.js';
import { JobQueues, queueBoard, queueBoardSettings } from '../queues/index.js';
import { activeTraceIds, startTracing } from '../tracing/index.js';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  durabilityOf,
  expectLayout,
  FIRST_LAYOUT,
  KeyspaceLayoutError,
  migrateLayout,
  openRedis,
  RedisAvailability,
  redisCheck,
  redisEndpoint,
  RedisRateWindow,
  redisTarget,
  withRedisPassword,
  type KeyspaceLayout,
  type RedisClient,
  type RedisEndpoint,
} from '../redis/index.js';
import { createLeaders } from './leadership.js';
import type { CommonConfig } from './variables.js';

type DurabilityConfig = Parameters<typeof durabilityOf>[0];

/** What the platform hands a component's setup: everything already connected and instrumented. */
export interface ComponentRuntime<C> {
  config: C;
  logger: Logger;
  /** Shared Redis connection for the component's own keys. */
  redis: RedisClient;
  /** Where Redis is (REDIS_URL, Sentinels or cluster nodes), for connections of the component's own. */
  redisEndpoint: RedisEndpoint;
  queues: JobQueues;
  readiness: ReadinessController;
  /** Parts that start after setup (a worker's chain pipeline): /livez fails when one takes too long. */
  startup: StartupWatch;
  metrics: Registry;
  shutdown: Shutdown;
  /**
   * Runs `loop` on one replica of the deployment at a time (see runAsLeader). `reportsProgress`: the loop calls
   * `progress()` as it moves on, and its leader steps down (and /livez fails) when it has not for LEADER_STALL_MS.
   */
  lead(name: string, loop: LeaderLoop, options?: { reportsProgress?: boolean }): Leadership;
}

export interface ComponentParts {
  routes?: Route[];
  /** Requests the component (or its worker) sends to callers, for the OpenAPI document. */
  webhooks?: WebhookSpec[];
  /** Serve bull-board at /queues for the component's queues (api components). */
  queueBoard?: boolean;
  /** Runs during shutdown after HTTP has stopped and before queues close. */
  stop?: () => Promise<void>;
  /**
   * When an error means a dependency of the component's own is unusable (its upstream node unreachable, say):
   * the 503's message and the cause to log. Redis is the platform's business and needs no entry.
   */
  dependencyFailure?: (error: unknown) => { message: string; cause: unknown } | undefined;
}

export interface ComponentDefinition<S extends ConfigSpec> {
  name: string;
  title: string;
  description: string;
  version: string;
  config: S;
  /** The variable holding the HTTP port. */
  portVariable: keyof S & string;
  /** The key layout of the service's keyspace (default FIRST_LAYOUT); the service's components share it. */
  layout?: KeyspaceLayout;
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
  /**
   * How the component reaches the Kubernetes API server when it runs in a cluster (see inCluster): the pod's
   * service account by default; tests point it at a stand-in.
   */
  kubeConfig?: () => KubeConfig;
  /**
   * The variables of the service's other components: a service's env file is shared by its api and worker, so
   * their variables are not reported as unknown here.
   */
  serviceVariables?: readonly string[];
}

export interface StartedComponent<C> {
  runtime: ComponentRuntime<C>;
  server: RunningServer;
  url: string;
  /** Shuts down as on SIGTERM; resolves to the exit code the process would use. */
  stop(): Promise<number>;
}

/** Workers set how long their pipeline may take to start (workerVariables). */
type WorkerSettings = { LIVENESS_MAX_PIPELINE_START_MS?: number };

type ApiSettings = {
  QUEUES_UI?: boolean;
  QUEUES_BASIC_AUTH?: string;
  HTTP_JSON_LIMIT?: string;
  HTTP_BASE_PATH?: string;
  HTTP_TRUST_PROXY?: TrustProxy;
  API_TOKENS?: ApiToken[];
  API_TOKENS_FOR_READS?: boolean;
  RATE_LIMIT_PER_MINUTE?: number;
};

/** What the HTTP surface needs from Redis: a fail-fast connection for its counters, and why Redis fails. */
interface HttpRedis {
  connection: RedisClient;
  availability: RedisAvailability;
}

/** The component's HTTP surface: health, metrics, its own routes, and (api components) the queue board. */
function componentHttpApp<C>(
  definition: { name: string; version: string; title: string; description: string },
  runtime: ComponentRuntime<C>,
  parts: ComponentParts,
  health: {
    eventLoop: EventLoopWatch;
    startup: StartupWatch;
    startedAt: Date;
    leases: () => Record<string, LeaseStatus>;
    stalledLoops: () => string[];
  },
  redis: HttpRedis,
) {
  const { logger, metrics, readiness, queues } = runtime;
  const api = runtime.config as ApiSettings;
  const common = runtime.config as CommonConfig;
  const mounts: Mount[] = [];
  if (parts.queueBoard) {
    const policy = { enabled: api.QUEUES_UI !== false, environment: common.ENVIRONMENT };
    const board = queueBoardSettings(
      api.QUEUES_BASIC_AUTH ? { ...policy, basicAuth: api.QUEUES_BASIC_AUTH } : policy,
      logger,
    );
    if (board) mounts.push(queueBoard(queues.all(), { path: '/queues', ...board }));
  }
  const { name, version, title, description } = definition;
  const tokens = api.API_TOKENS ?? [];
  const perMinute = api.RATE_LIMIT_PER_MINUTE ?? 0;
  return createHttpApp({
    logger,
    metrics,
    info: { title, version, description },
    routes: [
      ...healthRoutes({ component: name, version, readiness, ...health }),
      metricsRoute(metrics),
      ...(parts.routes ?? []),
    ],
    mounts,
    ...(parts.webhooks ? { webhooks: parts.webhooks } : {}),
    tracing: common.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined,
    ...(api.HTTP_JSON_LIMIT ? { jsonLimit: api.HTTP_JSON_LIMIT } : {}),
    ...(api.HTTP_BASE_PATH ? { basePath: api.HTTP_BASE_PATH } : {}),
    ...(api.HTTP_TRUST_PROXY !== undefined ? { trustProxy: api.HTTP_TRUST_PROXY } : {}),
    ...(tokens.length > 0 ? { bearer: { tokens, protectReads: api.API_TOKENS_FOR_READS ?? false } } : {}),
    ...(perMinute > 0
      ? { rateLimit: { perMinute, window: new RedisRateWindow(redis.connection, common.CACHE_KEY_PREFIX) } }
      : {}),
    dependencyFailure: (error) => {
      const unavailable = redis.availability.unavailableError(error);
      if (unavailable) return { message: unavailable.failure.summary, cause: unavailable };
      return parts.dependencyFailure?.(error);
    },
  }).app;
}

/**
 * REDIS_PASSWORD replaces the password of REDIS_URL. The result is written back into the parsed configuration
 * once, here, so that every consumer of REDIS_URL (the queues, the services' own connections) connects with
 * it, and before the secrets are collected, so that the logger scrubs the password inside the URL as well.
 */
function applyRedisPassword(common: CommonConfig): void {
  if (common.REDIS_PASSWORD !== undefined)
    common.REDIS_URL = withRedisPassword(common.REDIS_URL, common.REDIS_PASSWORD);
}

/** The variables `migrate` reads: where Redis is, and the service's keyspace. */
const REDIS_VARIABLES = [
  'REDIS_URL',
  'REDIS_PASSWORD',
  'REDIS_SENTINELS',
  'REDIS_SENTINEL_NAME',
  'REDIS_SENTINEL_PASSWORD',
  'REDIS_CLUSTER_NODES',
  'CACHE_KEY_PREFIX',
];

/**
 * Brings the service's keyspace to the key layout its components read (migrateLayout), with the Redis settings of
 * `definition`'s configuration from `env`; resolves with what it printed, one line a step.
 */
export async function migrateKeyspace(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any component of the service will do
  definition: ComponentDefinition<any>,
  env: NodeJS.ProcessEnv,
  print: (line: string) => void,
): Promise<void> {
  const spec = Object.fromEntries(
    Object.entries(definition.config as ConfigSpec).filter(([name]) => REDIS_VARIABLES.includes(name)),
  );
  const settings = readConfig(spec, env).config as unknown as CommonConfig;
  const url =
    settings.REDIS_PASSWORD === undefined
      ? settings.REDIS_URL
      : withRedisPassword(settings.REDIS_URL, settings.REDIS_PASSWORD);
  const redis = openRedis(redisEndpoint({ ...settings, REDIS_URL: url }), 'blocking');
  const layout: KeyspaceLayout = definition.layout ?? FIRST_LAYOUT;
  const keyspace = settings.CACHE_KEY_PREFIX;
  try {
    const { from, to } = await migrateLayout(redis, keyspace, layout, (step) =>
      print(`${keyspace}: layout ${step.to - 1} -> ${step.to}: ${step.description}`),
    );
    print(from === to ? `${keyspace}: layout ${to}, nothing to migrate` : `${keyspace}: layout ${from} -> ${to}: done`);
  } finally {
    redis.disconnect();
  }
}

/**
 * Refuses to start on a keyspace of another key layout (KeyspaceLayoutError, which names what to do). A Redis that
 * does not answer within `waitMs` is left to readiness, whose keyspace check says the same once it does.
 */
async function refuseOtherLayout(redis: RedisClient, keyspace: string, layout: KeyspaceLayout, waitMs: number) {
  const checked = expectLayout(redis, keyspace, layout).then(
    () => undefined,
    (error: unknown) => error,
  );
  const outcome = await Promise.race([checked, sleep(waitMs, 'no answer', { ref: false })]);
  if (outcome instanceof KeyspaceLayoutError) throw outcome;
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
  const { config, notices } = options.handleSignals
    ? loadConfigOrExit(definition.config, env, definition.name, options.serviceVariables)
    : readConfig(definition.config, env, definition.name, options.serviceVariables);
  const common = config as unknown as CommonConfig;
  applyRedisPassword(common);
  // Each API token is a secret of its own, beside the whole API_TOKENS value.
  const apiTokens = ((config as Record<string, unknown>).API_TOKENS as ApiToken[] | undefined) ?? [];
  const secrets = [...secretValues(definition.config, config), ...apiTokens.map((entry) => entry.token)];
  const logger = createLogger({
    component: definition.name,
    level: common.LOG_LEVEL,
    pretty: common.LOG_PRETTY,
    secrets,
    ...(common.OTEL_EXPORTER_OTLP_ENDPOINT === undefined ? {} : { traceIds: activeTraceIds }),
    ...(options.logDestination ? { destination: options.logDestination } : {}),
  });
  for (const notice of notices) logger.warn({ setting: notice.split(' ')[0] }, notice);
  const tracing = await startTracing({
    endpoint: common.OTEL_EXPORTER_OTLP_ENDPOINT,
    serviceName: definition.name,
    serviceVersion: definition.version,
    logger,
  });
  if (options.handleSignals) {
    // The component owns the process: a failure nobody handled ends it on purpose, with its cause logged, and
    // what libraries print goes through the logger.
    guardProcess(logger);
    routeConsoleToLogger(logger);
  }
  const cluster = inCluster(common, env, options.kubeConfig);
  const startedAt = new Date();
  const metrics = createMetricsRegistry(definition.name);
  const shutdown = new Shutdown({ logger, graceMs: common.SHUTDOWN_GRACE_MS });

  // Every connection the platform opens tells what it meets (refused credentials, no answer) to one place.
  const availability = new RedisAvailability({ logger });
  const endpoint = redisEndpoint(common);
  const redis = availability.watch(openRedis(endpoint));
  const failFastRedis = availability.watch(openRedis(endpoint, 'failFast'));
  const readiness = new ReadinessController({
    logger,
    metrics,
    intervalMs: common.READINESS_INTERVAL_MS,
    timeoutMs: common.READINESS_TIMEOUT_MS,
  });
  // In a cluster, `kubectl describe pod` tells why the pod is not ready: each transition becomes an event on it.
  const podEvents = cluster
    ? new KubernetesPodEvents({ ...cluster, component: definition.name, logger, scrub: secretScrubber(secrets) })
    : undefined;
  if (podEvents) recordReadinessEvents(readiness, podEvents);
  // Redis is ready for the component when it answers and its keyspace has the layout the component reads.
  const layout = definition.layout ?? FIRST_LAYOUT;
  const redisReachable = redisCheck(failFastRedis, redisTarget(endpoint), availability);
  readiness.add({
    ...redisReachable,
    probe: async (signal) => {
      await redisReachable.probe(signal);
      await expectLayout(failFastRedis, common.CACHE_KEY_PREFIX, layout);
    },
  });
  try {
    await refuseOtherLayout(redis, common.CACHE_KEY_PREFIX, layout, common.READINESS_TIMEOUT_MS);
  } catch (error) {
    for (const connection of [redis, failFastRedis]) connection.disconnect();
    await tracing?.shutdown();
    throw error;
  }
  const durability = 'REDIS_DURABILITY' in config ? durabilityOf(config as unknown as DurabilityConfig) : undefined;
  const queues = new JobQueues({
    redis: endpoint,
    keyPrefix: common.CACHE_KEY_PREFIX,
    logger,
    metrics,
    availability,
    // A job's writes go through the queues' connection (jobs it adds) and the component's own.
    ...(durability ? { durability: { durability, writtenOn: [redis] } } : {}),
  });
  const leaders = createLeaders(common, failFastRedis, logger, metrics, cluster);
  const lead = leaders.lead;

  const startup = new StartupWatch((config as WorkerSettings).LIVENESS_MAX_PIPELINE_START_MS);
  const runtime: ComponentRuntime<ConfigOf<S>> = {
    config,
    logger,
    redis,
    redisEndpoint: endpoint,
    queues,
    readiness,
    startup,
    metrics,
    shutdown,
    lead,
  };
  const parts = await definition.setup(runtime);

  const eventLoop = new EventLoopWatch(common.LIVENESS_MAX_EVENT_LOOP_DELAY_MS);
  const app = componentHttpApp(
    definition as unknown as ComponentDefinition<ConfigSpec>,
    runtime,
    parts,
    { eventLoop, startup, startedAt, leases: leaders.statuses, stalledLoops: leaders.stalled },
    { connection: failFastRedis, availability },
  );
  readiness.start();
  const port = options.port ?? Number((config as Record<string, unknown>)[definition.portVariable]);
  const server = await listen(app, port);
  logger.info({ port: server.port, version: definition.version }, `${definition.name} listening`);

  shutdown
    .step('stop reporting ready', () => readiness.markShuttingDown())
    .step('stop HTTP', (remainingMs) => server.close(remainingMs, common.SHUTDOWN_DRAIN_MS))
    .step('stop leader loops', () => leaders.stopAll())
    .step('stop component', () => parts.stop?.())
    .step('drain workers and close queues', (remainingMs) => queues.close(Math.max(0, remainingMs - 1000)))
    .step('deliver pod events', () => podEvents?.settle())
    .step('close connections', () => {
      readiness.stop();
      eventLoop.stop();
      for (const connection of [redis, failFastRedis]) connection.disconnect();
    })
    .step('export the last spans', () => tracing?.shutdown());
  if (options.handleSignals) shutdown.installSignalHandlers();

  return { runtime, server, url: server.url, stop: () => shutdown.run('stop requested') };
}
