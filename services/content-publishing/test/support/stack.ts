import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { connectChain, type ChainConnection } from '@frequency-gateway/chain';
import { parseExtraGenesis, startDevchain, type Devchain, type DevchainOptions } from '@frequency-gateway/devchain';
import { dsnpUsers, startRedisServer, type LocalRedis } from '@frequency-gateway/devstack';
import {
  createLogger,
  createMetricsRegistry,
  intakeStream,
  IntakeRelay,
  JobQueues,
  redisKeyspace,
  startComponent,
  type StartedComponent,
} from '@frequency-gateway/platform';
import { Queue, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { contentPublishingApi } from '../../src/api/component.js';
import { contentRequests } from '../../src/requests.js';

/** The api on a real Redis server, a devchain over WebSocket and the embedded content store. */
export interface ApiStack {
  api: StartedComponent<unknown>;
  url: string;
  redisServer: LocalRedis;
  /** A client of the same Redis, for reading what the api wrote. */
  redis: Redis;
  devchain: Devchain;
  /** A client of the devchain, for setting up users and schemas. */
  chain: ChainConnection;
  /** Folder of the embedded content store. */
  storeDir: string;
  /** A client of one of the service's queues (closed with the stack), to read the jobs the api added. */
  queue<T>(name: string): Queue<T>;
  /** Resolves once the relay has moved every accepted request into its queue (the intake stream is empty). */
  drained(): Promise<void>;
  /** A job of a queue once the relay has moved what was accepted so far. */
  jobOf<T>(queue: Queue<T>, id: string): Promise<Job<T> | undefined>;
  close(): Promise<void>;
}

export const TEST_PREFIX = 'cp';
/** Unless a suite gives its own genesis, the devchain has users MSA 2–9, each delegating DSNP content to MSA 1. */
export const TEST_USERS = 8;
/** The Redis keys of the stack's api: `{cp}:…`. */
export const TEST_KEYSPACE = redisKeyspace(TEST_PREFIX);

/** The api over a fresh Redis and devchain (genesis: `TEST_USERS` DSNP users unless `devchainOptions.genesis`). */
export async function startApiStack(
  env: Record<string, string> = {},
  devchainOptions: DevchainOptions = {},
  options: { relay?: boolean } = {},
): Promise<ApiStack> {
  const genesis = devchainOptions.genesis ?? (await parseExtraGenesis(dsnpUsers(TEST_USERS)));
  const [redisServer, devchain] = await Promise.all([
    startRedisServer(),
    startDevchain({ ...devchainOptions, genesis }),
  ]);
  const storeDir = mkdtempSync(join(tmpdir(), 'content-publishing-test-'));
  const api = (await startComponent(contentPublishingApi, {
    env: {
      REDIS_URL: redisServer.url,
      FREQUENCY_API_WS_URL: devchain.url,
      PROVIDER_ID: '1',
      IPFS_EMBEDDED_DIR: storeDir,
      CACHE_KEY_PREFIX: TEST_PREFIX,
      ENVIRONMENT: 'dev',
      ...env,
    },
    port: 0,
    logDestination: new PassThrough().resume(),
  })) as StartedComponent<unknown>;
  const chain = await connectChain({ url: devchain.url });
  const redis = new Redis(redisServer.url);
  const queues: Queue[] = [];
  // The worker's relay, in this process: it moves accepted requests from the intake stream into their queues
  // (unless `relay: false`: then they wait there, as with no worker running).
  const logger = createLogger({ component: 'relay', level: 'fatal', pretty: false, destination: new PassThrough() });
  const metrics = createMetricsRegistry('relay');
  const jobQueues = new JobQueues({ redis: redisServer.url, keyPrefix: TEST_KEYSPACE, logger, metrics });
  const stream = intakeStream(TEST_KEYSPACE, contentRequests.intake);
  const relay = new IntakeRelay({ redis: redisServer.url, stream, queues: jobQueues, logger, metrics });
  if (options.relay !== false) relay.start();
  const drained = async () => {
    const deadline = Date.now() + 10_000;
    while ((await redis.xlen(stream)) > 0) {
      if (Date.now() > deadline) throw new Error('the intake relay did not empty the stream within 10 s');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const stack: ApiStack = {
    api,
    url: api.url,
    redisServer,
    redis,
    devchain,
    chain,
    storeDir,
    queue: <T>(name: string) => {
      const queue = new Queue<T>(name, { connection: { url: redisServer.url }, prefix: `${TEST_KEYSPACE}:bull` });
      queues.push(queue as Queue);
      return queue;
    },
    drained,
    jobOf: async <T>(queue: Queue<T>, id: string) => {
      await drained();
      return queue.getJob(id);
    },
    close: async () => {
      await relay.stop();
      await jobQueues.close();
      await Promise.all(queues.map((queue) => queue.close()));
      redis.disconnect();
      await api.stop();
      await chain.close();
      // A test may have replaced the devchain (stopped and restarted on the same port): close the current one.
      await stack.devchain.close();
      await redisServer.stop();
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
  return stack;
}

type OpenApiOperations = Record<string, Record<string, { responses?: Record<string, unknown> }>>;

/** Fails unless the api's OpenAPI document lists `status` among the answers of the operation. */
export async function expectDocumented(url: string, method: string, path: string, status: number): Promise<void> {
  const doc = (await (await fetch(`${url}/docs/swagger.json`)).json()) as { paths: OpenApiOperations };
  const documented = Object.keys(doc.paths[path]?.[method]?.responses ?? {});
  expect({ operation: `${method.toUpperCase()} ${path}`, status: documented.includes(String(status)) }).toEqual({
    operation: `${method.toUpperCase()} ${path}`,
    status: true,
  });
}

/** A file with PNG magic bytes and deterministic content. */
export function png(size: number, seed = 0): Uint8Array {
  const bytes = new Uint8Array(size);
  bytes.set([0x89, 0x50, 0x4e, 0x47]);
  for (let i = 4; i < size; i++) bytes[i] = (i + seed) % 251;
  return bytes;
}

export function form(files: { name: string; type: string; bytes: Uint8Array }[], fields: [string, string][] = []) {
  const body = new FormData();
  for (const [name, value] of fields) body.append(name, value);
  for (const file of files) body.append('files', new Blob([file.bytes], { type: file.type }), file.name);
  return body;
}
