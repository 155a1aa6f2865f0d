import { cryptoWaitReady } from '@polkadot/util-crypto';
import { ChainQueries, connectChain, type ChainConnection } from '@frequency-gateway/chain';
import type { DevchainProcess } from '@frequency-gateway/devchain';
import { LOOPBACK_DESTINATIONS, redisKeyspace } from '@frequency-gateway/platform';
import { verifyWebhook } from '@frequency-gateway/webhooks';
import { Queue } from 'bullmq';
import { Cluster, Redis } from 'ioredis';
import { ACCOUNT_QUEUES } from '../../src/index.js';
import {
  callJson,
  startWebhookReceiver,
  waitUntil,
  type JsonAnswer,
  type LocalRedis,
  type LocalRedisCluster,
  type LocalRedisSentinelGroup,
  type RedisBackingMode,
  type WebhookReceiver,
} from '@frequency-gateway/devstack';
import { startLocalGateway, type ComponentProcess } from '@frequency-gateway/devstack/gateway';
import {
  encodeAuthorizationPayload,
  SiwfUser,
  type KeyKind,
  type SignUpOptions,
} from '@frequency-gateway/devstack/siwf';

export const WEBHOOK_SECRET = `whsec_${Buffer.from('account-test-secret-of-24b').toString('base64')}`;
export const PREFIX = 'account';
/** The Redis keys of the stack's components: `{account}:…`. */
export const KEYSPACE = redisKeyspace(PREFIX);

/** The account service as deployed: api and worker processes, the devchain, Redis and the application's webhook receiver. */
export interface AccountStack {
  devchain: DevchainProcess;
  /** The redis-server (with `redis: 'cluster'`, the cluster's first node; with `redis: 'sentinel'`, the first primary). */
  redis: LocalRedis;
  /** With `redis: 'cluster'`, the cluster. */
  cluster: LocalRedisCluster | undefined;
  /** With `redis: 'sentinel'`, the primary, its replicas and their Sentinels. */
  sentinel: LocalRedisSentinelGroup | undefined;
  /**
   * A client of it (a cluster client on a cluster; through the Sentinels, so on the current primary, with
   * `redis: 'sentinel'`), for reading what the components keep.
   */
  admin: Redis | Cluster;
  receiver: WebhookReceiver;
  api: ComponentProcess;
  workers: ComponentProcess[];
  chain: ChainConnection;
  startWorker(env?: Record<string, string>): Promise<ComponentProcess>;
  /** One more api process with other settings (e.g. read-only), stopped with the stack. */
  startApi(env: Record<string, string>): Promise<ComponentProcess>;
  /** A JSON request to the api. */
  call(method: string, path: string, body?: unknown): Promise<JsonAnswer>;
  /** What a new user of the given key kind signs up with: the three payloads and a login. */
  signUpOf(user: SiwfUser, options?: Partial<SignUpOptions>): ReturnType<SiwfUser['signUp']>;
  /** The one webhook of a request, once it has arrived, checked to be signed (fails on a second delivery). */
  webhookOf(referenceId: string): Promise<Record<string, unknown>>;
  /** A new user of the key kind, signed up (without a handle) through the api once it is finalized, with their MSA id. */
  register(kind: KeyKind): Promise<{ user: SiwfUser; msaId: string }>;
  /**
   * Whether nothing is left that could send a notification (again): no job of the worker's queues waiting,
   * running (a killed worker's job stays active until it is found stalled) or delayed, and no transaction still
   * followed on chain. Tests that check "exactly once" wait for it.
   */
  settled(): Promise<boolean>;
  stop(): Promise<void>;
}

export interface StackOptions {
  blockTimeMs?: number;
  finalityLag?: number;
  apiEnv?: Record<string, string>;
  /** More node options for the api process (e.g. --cpu-prof). */
  apiNodeArgs?: string[];
  /** More node options for the worker processes. */
  workerNodeArgs?: string[];
  /** Run the components from dist/ as the image does (after `make build`), not from the sources through tsx. */
  compiled?: boolean;
  /** Worker environment over the stack's; a function of the receiver for values that name it. */
  workerEnv?: Record<string, string> | ((receiver: WebhookReceiver) => Record<string, string>);
  /** Collects the log lines (stdout) of every worker. */
  workerLogs?: string[];
  /**
   * A single redis-server (the default), a 3-primary Redis Cluster the components reach by REDIS_CLUSTER_NODES,
   * or a primary with 4 replicas and 3 Sentinels they reach by REDIS_SENTINELS.
   */
  redis?: RedisBackingMode;
}

export async function startAccountStack(options: StackOptions = {}): Promise<AccountStack> {
  const receiver = await startWebhookReceiver();
  const gateway = await startLocalGateway({
    components: [
      ['account', 'api'],
      ['account', 'worker'],
    ],
    sealing: 'interval',
    blockTimeMs: options.blockTimeMs ?? 1_000,
    finalityLag: options.finalityLag ?? 2,
    redis: options.redis,
    redisServer: { appendOnly: 'everysec' },
    kubo: false,
    env: { CACHE_KEY_PREFIX: PREFIX, READINESS_INTERVAL_MS: '250' },
    roleEnv: {
      api: { SIWF_V2_URI_VALIDATION: 'https://localhost/login', ...options.apiEnv },
      worker: {
        WEBHOOK_BASE_URL: receiver.url,
        WEBHOOK_SECRET,
        WEBHOOK_RETRY_BASE_MS: '500',
        WEBHOOK_RETRY_MAX_MS: '4000',
        WEBHOOK_MAX_ATTEMPTS: '40',
        // The receiver listens on this machine's loopback interface, which the outbound policy refuses unless opened.
        OUTBOUND_ALLOWED_DESTINATIONS: LOOPBACK_DESTINATIONS,
        ...(typeof options.workerEnv === 'function' ? options.workerEnv(receiver) : options.workerEnv),
      },
    },
    roleOptions: {
      api: { nodeArgs: options.apiNodeArgs ?? [], compiled: options.compiled ?? false },
      // The worker's log lines, for tests that read what it said (the caller's array when it passes one).
      worker: {
        nodeArgs: options.workerNodeArgs ?? [],
        compiled: options.compiled ?? false,
        ...(options.workerLogs ? { output: options.workerLogs } : {}),
      },
    },
  }).catch(async (error: unknown) => {
    await receiver.stop();
    throw error;
  });
  const { chain: devchain, redis, cluster, sentinel } = gateway.backing;
  const api = gateway.components['account-api']!;
  const workers = [gateway.components['account-worker']!];
  const chain = await connectChain({ url: devchain.url });

  const queries = new ChainQueries(chain.api);
  const graphKeys = await queries.intentByName('dsnp.public-key-key-agreement');
  const intents = await Promise.all(['dsnp.broadcast', 'dsnp.reply'].map((name) => queries.intentByName(name)));

  const signUpOf: AccountStack['signUpOf'] = async (user, overrides = {}) => {
    const finalized = (await queries.finalizedBlock()).number;
    return user.signUp(chain.api, {
      providerId: 1,
      intentIds: intents.map((intent) => intent!.intentId),
      expiration: finalized + 50,
      handle: `user${Math.floor(Math.random() * 1e6)}`,
      itemActions: {
        schemaId: graphKeys!.latestSchemaId!,
        targetHash: 0,
        items: [`0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex')}`],
      },
      login: { uri: 'https://localhost/login' },
      ...overrides,
    });
  };
  const call: AccountStack['call'] = (method, path, body) => callJson(api.url, method, path, body);

  // Through the Sentinels, the admin client and the queues follow a failover to the new primary.
  const viaSentinels = sentinel && {
    sentinels: sentinel.sentinels.map((one) => ({ host: '127.0.0.1', port: one.port })),
    name: sentinel.name,
  };
  const admin = cluster
    ? new Cluster(cluster.nodes.map((node) => ({ host: '127.0.0.1', port: node.port })))
    : viaSentinels
      ? new Redis(viaSentinels)
      : new Redis(redis.url);
  const queues = Object.values(ACCOUNT_QUEUES).map(
    (name) =>
      new Queue(name, {
        connection: cluster ? admin : (viaSentinels ?? { url: redis.url }),
        prefix: `${KEYSPACE}:bull`,
      }),
  );
  // Through a failover, the Sentinels name no reachable primary for a moment: the test's own clients retry, and
  // what they read afterwards is what the tests check. Their errors meanwhile would be unhandled error events.
  if (viaSentinels) {
    admin.on('error', () => undefined);
    for (const queue of queues) queue.on('error', () => undefined);
  }

  return {
    devchain,
    redis,
    cluster,
    sentinel,
    admin,
    receiver,
    api,
    workers,
    chain,
    startWorker: async (env) => {
      const worker = await gateway.start('account', 'worker', env);
      workers.push(worker);
      return worker;
    },
    startApi: (env) => gateway.start('account', 'api', env),
    call,
    signUpOf,
    webhookOf: async (referenceId) => {
      const mine = () =>
        receiver.received.filter((delivery) => (delivery.body as { referenceId?: string }).referenceId === referenceId);
      await waitUntil(async () => mine().length > 0, 60_000, `the webhook of ${referenceId}`);
      const deliveries = mine();
      if (deliveries.length !== 1) throw new Error(`${deliveries.length} webhooks for ${referenceId}`);
      if (!verifyWebhook(WEBHOOK_SECRET, deliveries[0]!.headers, deliveries[0]!.raw))
        throw new Error(`the webhook of ${referenceId} is not signed with the secret`);
      return deliveries[0]!.body as Record<string, unknown>;
    },
    register: async (kind) => {
      const user = SiwfUser.create(kind);
      const response = await signUpOf(user, { handle: undefined });
      const answer = await call('POST', '/v2/accounts/siwf', {
        authorizationPayload: encodeAuthorizationPayload(response),
      });
      if (answer.status !== 200) throw new Error(`sign-up refused: ${JSON.stringify(answer.body)}`);
      let msaId = '';
      await waitUntil(
        async () => {
          const record = (await call('GET', `/v1/requests/${answer.body.signUpReferenceId as string}`)).body;
          msaId = String(record.msaId ?? '');
          return record.state === 'finalized';
        },
        60_000,
        'the sign-up finalized',
      );
      return { user, msaId };
    },
    settled: async () => {
      for (const queue of queues) {
        const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children');
        if (Object.values(counts).some((count) => count > 0)) return false;
      }
      return (await admin.hlen(`${KEYSPACE}:tx:pending`)) === 0;
    },
    stop: async () => {
      await Promise.all(queues.map((queue) => queue.close()));
      admin.disconnect();
      await chain.close();
      await gateway.stop();
      await receiver.stop();
    },
  };
}

/**
 * The stack of a test file: started before its tests (after WASM crypto is ready) and stopped after them. The
 * returned object stands for the started stack.
 */
export function useAccountStack(options: StackOptions = {}): AccountStack {
  let started: AccountStack | undefined;
  beforeAll(async () => {
    await cryptoWaitReady();
    started = await startAccountStack(options);
    // More than a component's own start deadline (120 s), so a slow start fails with the component's reason.
  }, 240_000);
  afterAll(async () => {
    await started?.stop();
  });
  return new Proxy({} as AccountStack, {
    get: (_target, key) => {
      if (!started) throw new Error('the account stack is used before it started (use it inside tests and hooks)');
      return started[key as keyof AccountStack];
    },
  });
}
