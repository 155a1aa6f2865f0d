import { connectChain, type ChainConnection } from '@frequency-gateway/chain';
import type { DevchainProcess } from '@frequency-gateway/devchain';
import {
  callJson,
  dsnpUsers,
  untilSettled,
  type LocalKubo,
  type LocalRedis,
  type LocalRedisCluster,
  type LocalRedisSentinelGroup,
  type RedisBackingMode,
} from '@frequency-gateway/devstack';
import { startLocalGateway, type ComponentProcess } from '@frequency-gateway/devstack/gateway';
import { TEST_USERS } from './stack.js';

export { waitUntil } from '@frequency-gateway/devstack';
import { readBatch } from '@frequency-gateway/dsnp';
import { LOOPBACK_DESTINATIONS } from '@frequency-gateway/platform';

/** The publishing pipeline as deployed: api and worker processes, the devchain, Redis and Kubo each their own. */
export interface PipelineStack {
  devchain: DevchainProcess;
  /** The redis-server (with `redis: 'cluster'`, the cluster's first node). */
  redis: LocalRedis;
  /** With `redis: 'cluster'`, the cluster. */
  cluster: LocalRedisCluster | undefined;
  /** With `redis: 'sentinel'`, the primary, its replicas and their Sentinels. */
  sentinel: LocalRedisSentinelGroup | undefined;
  /** Starts one more api process with more settings (over the api's), stopped with the stack. */
  startApi(env: Record<string, string>): Promise<ComponentProcess>;
  kubo: LocalKubo;
  api: ComponentProcess;
  workers: ComponentProcess[];
  /** A client of the chain, for reading what was published. */
  chain: ChainConnection;
  /** Starts one more worker (a replica, or a restart after a kill). */
  startWorker(env?: Record<string, string>): Promise<ComponentProcess>;
  /** GET /v1/requests/{id}. */
  request(referenceId: string): Promise<RequestRecord | undefined>;
  /** Waits until every request is in a final state; returns their records. */
  settled(referenceIds: string[], timeoutMs: number): Promise<RequestRecord[]>;
  stop(): Promise<void>;
}

export interface RequestRecord {
  referenceId: string;
  state: string;
  kind: string;
  batch?: { cid: string; schemaId: number };
  transaction?: { hash: string };
  block?: { number: number; hash: string };
  error?: { message: string; module?: string; name?: string };
  history: { state: string; at: string }[];
}

export interface PipelineOptions {
  /** The devchain's sealing: a block every `blockTimeMs` (the default), or one only when a transaction comes. */
  sealing?: 'interval' | 'instant';
  blockTimeMs?: number;
  finalityLag?: number;
  /** Environment of every worker (BATCH_MAX_COUNT, WEBHOOK_BASE_URL, ...). */
  workerEnv?: Record<string, string>;
  /** More environment of the api. */
  apiEnv?: Record<string, string>;
  /** Collects the log lines (stdout) of the api. */
  apiLogs?: string[];
  /** Collects the log lines (stdout) of every worker. */
  workerLogs?: string[];
  workers?: number;
  /**
   * Extra genesis (users and delegations), as the devchain's --genesis file takes it; by default `TEST_USERS`
   * users (MSA 2–9) who delegated every DSNP content intent to the provider.
   */
  genesis?: object;
  /**
   * A single redis-server (the default), a 3-primary Redis Cluster the components reach by REDIS_CLUSTER_NODES,
   * or a primary with 4 replicas and 3 Sentinels they reach by REDIS_SENTINELS.
   */
  redis?: RedisBackingMode;
}

export async function startPipeline(options: PipelineOptions = {}): Promise<PipelineStack> {
  const workerCount = options.workers ?? 1;
  // Kept whether or not the caller asked: a wait that times out reports what the workers said.
  const workerLogs = options.workerLogs ?? [];
  const gateway = await startLocalGateway({
    components: [
      ['content-publishing', 'api'],
      ...(workerCount > 0 ? [['content-publishing', 'worker'] as const] : []),
    ],
    ...(options.sealing === 'instant'
      ? { sealing: 'instant' as const }
      : {
          sealing: 'interval' as const,
          blockTimeMs: options.blockTimeMs ?? 500,
          finalityLag: options.finalityLag ?? 2,
        }),
    genesis: options.genesis ?? dsnpUsers(TEST_USERS),
    redis: options.redis,
    redisServer: { appendOnly: 'everysec' },
    env: { CACHE_KEY_PREFIX: 'pipeline' },
    roleEnv: {
      api: options.apiEnv ?? {},
      worker: {
        BATCH_INTERVAL_SECONDS: '1',
        READINESS_INTERVAL_MS: '250',
        // Webhook receivers of the tests listen on this machine's loopback interface.
        OUTBOUND_ALLOWED_DESTINATIONS: LOOPBACK_DESTINATIONS,
        ...options.workerEnv,
      },
    },
    roleOptions: {
      api: options.apiLogs ? { output: options.apiLogs } : {},
      worker: { output: workerLogs },
    },
  });
  const { chain: devchain, redis, cluster, sentinel } = gateway.backing;
  const kubo = gateway.backing.kubo!;
  const api = gateway.components['content-publishing-api']!;
  const workers = workerCount > 0 ? [gateway.components['content-publishing-worker']!] : [];
  const startWorker = async (env: Record<string, string> = {}) => {
    const worker = await gateway.start('content-publishing', 'worker', env);
    workers.push(worker);
    return worker;
  };
  for (let index = 1; index < workerCount; index++) await startWorker();
  const chain = await connectChain({ url: devchain.url });

  const request = async (referenceId: string) => {
    const answer = await callJson(api.url, 'GET', `/v1/requests/${referenceId}`);
    return answer.status === 200 ? (answer.body as RequestRecord) : undefined;
  };
  return {
    devchain,
    redis,
    cluster,
    sentinel,
    startApi: (env) => gateway.start('content-publishing', 'api', env),
    kubo,
    api,
    workers,
    chain,
    startWorker,
    request,
    settled: (referenceIds, timeoutMs) =>
      untilSettled(referenceIds, request, timeoutMs).catch(async (error: Error) => {
        throw new Error(`${error.message}\n${await chainReport(chain)}\n${await workersReport(workers, workerLogs)}`, {
          cause: error,
        });
      }),
    stop: async () => {
      await chain.close();
      await gateway.stop();
    },
  };
}

/** Where the chain stands: its best and finalized blocks, and the transactions waiting in the node's pool. */
async function chainReport({ api }: ChainConnection): Promise<string> {
  try {
    const [best, finalized, pool] = await Promise.all([
      api.rpc.chain.getHeader(),
      api.rpc.chain.getFinalizedHead().then((hash) => api.rpc.chain.getHeader(hash)),
      api.rpc.author.pendingExtrinsics(),
    ]);
    return `chain: best #${best.number.toNumber()}, finalized #${finalized.number.toNumber()}, ${pool.length} transactions in the pool`;
  } catch (error) {
    return `chain: not read (${(error as Error).message})`;
  }
}

/** What the workers say of themselves: each one's /healthz (its leases among it) and their last warnings and errors. */
async function workersReport(workers: ComponentProcess[], logs: string[]): Promise<string> {
  const health = await Promise.all(
    workers.map(async (worker) => {
      const answer = await callJson(worker.url, 'GET', '/healthz').catch((error: Error) => ({ body: error.message }));
      return `worker ${worker.pid} (${worker.running() ? 'running' : 'exited'}) /healthz: ${JSON.stringify(answer.body)}`;
    }),
  );
  const warnings = logs.filter((line) => /"level":"(warn|error|fatal)"/.test(line)).slice(-40);
  return [...health, `last warnings and errors of the workers (${warnings.length}):`, ...warnings].join('\n');
}

interface Optional<T> {
  isSome: boolean;
  unwrap(): T;
}
type Numeric = { toNumber(): number; toString(): string };

/** The fields of the node's MessageResponse this suite reads. */
interface MessageResponse {
  schema_id: Numeric;
  block_number: Numeric;
  index: Numeric;
  provider_msa_id: Numeric;
  cid: Optional<{ toU8a(bare: boolean): Uint8Array }>;
  payload: Optional<{ toHex(): string }>;
  payload_length: Optional<Numeric>;
  msa_id: Optional<Numeric>;
}

export interface StoredMessage {
  blockNumber: number;
  index: number;
  schemaId: number;
  cid?: string;
  payloadLength?: number;
  payload?: string;
  msaId?: string;
  providerMsaId: string;
}

/** Messages of an intent stored in a block range, first block included, last excluded (messages_getByIntentId). */
export async function messagesOf(
  chain: ChainConnection,
  intentId: number,
  fromBlock: number,
  toBlock: number,
): Promise<StoredMessage[]> {
  const response = await chain.api.rpc.messages.getByIntentId(intentId, {
    from_block: fromBlock,
    from_index: 0,
    to_block: toBlock,
    page_size: 10_000,
  });
  return (response.content as unknown as MessageResponse[]).map((message) => ({
    blockNumber: message.block_number.toNumber(),
    index: message.index.toNumber(),
    schemaId: message.schema_id.toNumber(),
    providerMsaId: message.provider_msa_id.toString(),
    ...(message.cid.isSome ? { cid: new TextDecoder().decode(message.cid.unwrap().toU8a(true)) } : {}),
    ...(message.payload_length.isSome ? { payloadLength: message.payload_length.unwrap().toNumber() } : {}),
    ...(message.payload.isSome ? { payload: message.payload.unwrap().toHex() } : {}),
    ...(message.msa_id.isSome ? { msaId: message.msa_id.unwrap().toString() } : {}),
  }));
}

/** Reads a file through the Kubo gateway. */
export async function fromGateway(url: string): Promise<Buffer> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  return Buffer.from(await response.arrayBuffer());
}

/** The rows of a batch file in IPFS. */
export async function batchRows(kubo: LocalKubo, cid: string): Promise<Record<string, unknown>[]> {
  return readBatch(await fromGateway(`${kubo.gatewayUrl}/ipfs/${cid}`));
}

/** A metric of a component's /metrics, summed over the lines whose labels contain `labels`. */
export async function metric(url: string, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return text
    .split('\n')
    .filter((entry) => entry.startsWith(name) && entry.includes(labels))
    .reduce((sum, entry) => sum + Number(entry.split(' ').pop()), 0);
}
