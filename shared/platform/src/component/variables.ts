import { z } from 'zod';
import { LOG_LEVELS } from '../logging/index.js';
import { basePath, flag, port, positiveMs, redisUrl, secret, variable } from '../config/index.js';
import { apiTokensSchema } from '../http/bearerTokens.js';
import { trustProxySchema } from '../http/trustProxy.js';
import { redisNodes } from '../redis/endpoint.js';
import { redisKeyspace } from '../redis/keyspace.js';

/** Variables every component reads. */
export function commonVariables(defaults: { cacheKeyPrefix: string }) {
  return {
    ENVIRONMENT: variable(
      z.string().min(1).default('production'),
      'Deployment environment name; `dev` enables the /dev routes and development conveniences',
    ),
    LOG_LEVEL: variable(z.enum(LOG_LEVELS).default('info'), 'Minimum level of log lines'),
    LOG_PRETTY: variable(flag(false), 'Human-readable, coloured log lines instead of JSON'),
    REDIS_URL: variable(
      redisUrl(),
      'Redis connection URL (`redis://` or `rediss://` for TLS); credentials in it are kept secret',
      {
        urlWithCredentials: true,
        example: 'redis://:password@redis:6379/0',
      },
    ),
    REDIS_PASSWORD: secret(
      z.string().optional(),
      'Redis password, any characters; overrides a password in REDIS_URL, so that REDIS_URL (host, port, database) can sit in a ConfigMap and only this in a Secret',
      'change-me',
    ),
    REDIS_SENTINELS: variable(
      redisNodes().optional(),
      'Sentinels of a replicated Redis, as comma-separated `host:port`: every connection (queues and blocking ones included) asks them for the primary of REDIS_SENTINEL_NAME and follows it through a failover without a restart. REDIS_URL then gives only the scheme, credentials and database',
      { example: 'redis-sentinel-0:26379,redis-sentinel-1:26379,redis-sentinel-2:26379' },
    ),
    REDIS_SENTINEL_NAME: variable(
      z.string().min(1).default('mymaster'),
      'With REDIS_SENTINELS, the name of the primary the Sentinels monitor',
    ),
    REDIS_SENTINEL_PASSWORD: secret(
      z.string().optional(),
      "With REDIS_SENTINELS, the password of the Sentinels themselves (the primary's is REDIS_PASSWORD or the one in REDIS_URL)",
      'change-me',
    ),
    REDIS_CLUSTER_NODES: variable(
      redisNodes().optional(),
      'Nodes of a Redis Cluster, as comma-separated `host:port` (any of them; the rest are discovered). REDIS_URL then gives only the scheme and credentials. Each service keeps its keys under one hash tag (CACHE_KEY_PREFIX), so it runs unchanged on a cluster. Not with REDIS_SENTINELS',
      { example: 'redis-0:6379,redis-1:6379,redis-2:6379' },
    ),
    CACHE_KEY_PREFIX: variable(
      z
        .string()
        .regex(/^[A-Za-z0-9._-]+:?$/, 'letters, digits, dot, dash and underscore only (and one colon at the end)')
        .default(defaults.cacheKeyPrefix)
        .transform((prefix) => redisKeyspace(prefix.replace(/:$/, ''))),
      "Prefix of every Redis key this service writes, used as a hash tag: keys are `{<prefix>}:…` and BullMQ's live under `{<prefix>}:bull`, so that all of a service's keys share one Redis Cluster slot. A colon at the end (`account:`, as the reference gateway's env files write it) is the separator and is dropped. The api and worker of a service must share it",
    ),
    SHUTDOWN_GRACE_MS: variable(
      positiveMs(25_000),
      'Time allowed for a graceful stop after SIGTERM (in-flight requests and active jobs)',
    ),
    SHUTDOWN_DRAIN_MS: variable(
      z.coerce.number().int().min(0).default(0),
      'After SIGTERM, how long the HTTP server keeps its connections (less once none is left), answering each request with Connection: close, before it closes the idle ones: clients on kept-alive connections leave after an answer instead of being cut while they send one. Part of SHUTDOWN_GRACE_MS; 0: close idle connections at once',
    ),
    READINESS_INTERVAL_MS: variable(positiveMs(2_000), 'How often each dependency check runs'),
    READINESS_TIMEOUT_MS: variable(
      positiveMs(1_500),
      'How long a dependency check may take before it counts as failed',
    ),
    LIVENESS_MAX_EVENT_LOOP_DELAY_MS: variable(positiveMs(10_000), 'Event loop delay beyond which /livez fails'),
    LEADER_LEASE_DURATION_MS: variable(positiveMs(15_000), 'Lease duration for loops that run once per deployment'),
    LEADER_LEASE_PREFIX: variable(
      z
        .string()
        .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'lower-case letters, digits and inner dashes only')
        .optional(),
      "Inside a cluster, put before the name of every Lease (`<prefix>-<service>-<loop>`), so that two releases in one namespace each elect their own leaders; the chart sets the release's full name",
    ),
    LEADER_RENEW_DEADLINE_MS: variable(
      positiveMs(10_000),
      'A leader that cannot renew within this steps down (shorter than the lease)',
    ),
    LEADER_RETRY_PERIOD_MS: variable(
      positiveMs(2_000),
      'How often candidates try to acquire and leaders renew a lease',
    ),
    LEADER_STALL_MS: variable(
      positiveMs(300_000),
      "How long a leader's loop that reports its progress (the transaction tracker's and the content watcher's scans: each block and each round) may report none before its replica steps down, giving the lease to another, and its /livez fails, so that Kubernetes restarts it",
    ),
    OTEL_EXPORTER_OTLP_ENDPOINT: variable(
      z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
      'OpenTelemetry collector (OTLP over HTTP, JSON bodies) to which the component sends its traces, at `<endpoint>/v1/traces`: one trace per request from the HTTP call through its queue jobs, IPFS and chain calls to the webhook (`traceparent` header), and `trace_id`/`span_id` on the log lines written inside it. Unset: tracing off, the SDK is not even loaded',
      { example: 'http://otel-collector.monitoring:4318' },
    ),
    POD_NAME: variable(
      z.string().optional(),
      'Set by the chart from the downward API; with POD_NAMESPACE, inside a cluster, selects Kubernetes Leases and readiness events on the pod',
    ),
    POD_NAMESPACE: variable(z.string().optional(), 'Namespace of the pod (downward API)'),
    POD_UID: variable(
      z.string().optional(),
      'UID of the pod (downward API `metadata.uid`), so that `kubectl describe pod` shows its readiness events',
    ),
  };
}

/** Variables of an api component: its port, request limits and the queue board. */
export function apiVariables(defaults: { port: number }) {
  return {
    API_PORT: variable(port(defaults.port), 'HTTP port of the api'),
    HTTP_JSON_LIMIT: variable(
      z
        .string()
        .regex(/^\d+(b|kb|mb)$/i, 'a size such as 512kb or 1mb')
        .default('1mb'),
      'Largest accepted JSON request body',
    ),
    HTTP_BASE_PATH: variable(
      basePath().optional(),
      'A path prefix such as `/account` under which the api also serves every route, for an Ingress that routes by prefix without rewriting; plain paths keep working',
    ),
    HTTP_TRUST_PROXY: variable(
      trustProxySchema(),
      'Whose `X-Forwarded-For` names the client (for the rate limit and the logs): unset or `false` nobody (the client is the peer of the connection), a number of proxy hops in front of the api (`1` behind one Ingress controller), or comma-separated proxy addresses and CIDR networks (`loopback`, `linklocal`, `uniquelocal` name the private ranges)',
      { example: '10.0.0.0/8' },
    ),
    API_TOKENS: secret(
      apiTokensSchema(),
      'Bearer tokens of the api, as comma-separated `name:token` pairs (a token: 16 or more of A-Z a-z 0-9 - . _ ~ + /). When set, every route that writes or controls (any method but GET) answers 401 without `Authorization: Bearer <token>`; logs and the rate limit name the client by its name. Health, metrics, the OpenAPI document and Swagger UI stay open. Unset: no route needs a token',
      'backend:4f1c9e2a7b3d5068a1e4,ops:9b2e7d4c1a6f3e8b5d0c',
    ),
    API_TOKENS_FOR_READS: variable(
      flag(false),
      'With API_TOKENS, GET look-ups need a token as well (health and metrics never do)',
    ),
    RATE_LIMIT_PER_MINUTE: variable(
      z.coerce.number().int().min(0).default(0),
      'Requests a client (its token name, else its address) may make per minute, counted in Redis across every replica; over it: 429 with Retry-After. Health and metrics are not counted. 0: no limit. While Redis does not answer, requests pass uncounted',
    ),
    QUEUES_UI: variable(
      flag(true),
      'Serve the bull-board queue UI at /queues (outside ENVIRONMENT=dev only with QUEUES_BASIC_AUTH)',
    ),
    QUEUES_BASIC_AUTH: secret(
      z
        .string()
        .regex(/^[^:]+:.+$/, 'must be user:password')
        .optional(),
      'Credentials of the queue board at /queues (HTTP basic authentication), as `user:password`. Outside ENVIRONMENT=dev the board is not served without them (404, and a warning at start); in dev it is open without them',
      'admin:change-me',
    ),
  };
}

/** Variables of a worker component: the port of its health and metrics server, and how long it may take to start. */
export function workerVariables(defaults: { port: number }) {
  return {
    WORKER_API_PORT: variable(port(defaults.port), 'HTTP port of the worker (health and metrics only)'),
    LIVENESS_MAX_PIPELINE_START_MS: variable(
      positiveMs(600_000),
      "How long the worker's pipeline may keep retrying its start (the chain away, the provider key not yet a provider) before /livez fails and Kubernetes restarts the pod; a shorter outage restarts nothing",
    ),
    ...durabilityVariables(),
  };
}

/** How durable a write must be before it counts: on the primary, or on a replica too (apis and workers alike). */
export function durabilityVariables() {
  return {
    REDIS_DURABILITY: variable(
      z.enum(['acknowledged', 'replicated']).default('acknowledged'),
      '`acknowledged`: a write counts once the Redis primary has it. `replicated`: only once every replica in sync with the primary has it too, and at least one (WAIT), so that nothing is lost when the primary dies, whichever replica is promoted. An api answers a request (202) only then, and 503 when no replica confirms within REDIS_DURABILITY_TIMEOUT_MS (the same request again is safe); a worker completes a job only then, and submits a transaction only once its record is on a replica (otherwise the job is tried again). Costs a replication round trip per turn of requests and per job',
    ),
    REDIS_DURABILITY_TIMEOUT_MS: variable(
      positiveMs(1_000),
      'With REDIS_DURABILITY=replicated, how long a write waits for a replica before it is refused (an api answers 503, a job is tried again)',
    ),
  };
}

export type CommonConfig = {
  [K in keyof ReturnType<typeof commonVariables>]: z.output<ReturnType<typeof commonVariables>[K]['schema']>;
};
