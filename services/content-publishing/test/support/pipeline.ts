import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectChain, type ChainConnection } from '@frequency-gateway/chain';
import { spawnDevchain, type DevchainProcess } from '@frequency-gateway/devchain';
import {
  callJson,
  startKubo,
  startRedisBacking,
  waitUntil,
  type LocalKubo,
  type LocalRedis,
  type LocalRedisCluster,
  type LocalRedisSentinelGroup,
  type RedisBackingMode,
} from '@frequency-gateway/devstack';

export { waitUntil } from '@frequency-gateway/devstack';
import { readBatch } from '@frequency-gateway/dsnp';
import { LOOPBACK_DESTINATIONS } from '@frequency-gateway/platform';
import { spawnApi, spawnWorker, type ApiProcess } from './apiProcess.js';

/** The publishing pipeline as deployed: api and worker processes, the devchain, Redis and Kubo each their own. */
export interface PipelineStack {
  devchain: DevchainProcess;
  /** The redis-server (with `redis: 'cluster'`, the cluster's first node). */
  redis: LocalRedis;
  /** With `redis: 'cluster'`, the cluster. */
  cluster: LocalRedisCluster | undefined;
  /** With `redis: 'sentinel'`, the primary, its replicas and their Sentinels. */
  sentinel: LocalRedisSentinelGroup | undefined;
  /** Starts one more api process with more settings, stopped with the stack. */
  startApi(env: Record<string, string>): Promise<ApiProcess>;
  kubo: LocalKubo;
  api: ApiProcess;
  workers: ApiProcess[];
  /** A client of the chain, for reading what was published. */
  chain: ChainConnection;
  /** Starts one more worker (a replica, or a restart after a kill). */
  startWorker(env?: Record<string, string>): Promise<ApiProcess>;
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
  /** Extra genesis (users and delegations), as the devchain's --genesis file takes it. */
  genesis?: object;
  /**
   * A single redis-server (the default), a 3-primary Redis Cluster the components reach by REDIS_CLUSTER_NODES,
   * or a primary with 2 replicas and 3 Sentinels they reach by REDIS_SENTINELS.
   */
  redis?: RedisBackingMode;
}

export async function startPipeline(options: PipelineOptions = {}): Promise<PipelineStack> {
  const folder = mkdtempSync(join(tmpdir(), 'pipeline-'));
  const genesisFile = join(folder, 'genesis.json');
  writeFileSync(genesisFile, JSON.stringify(options.genesis ?? {}));
  const [devchain, backing, kubo] = await Promise.all([
    spawnDevchain({
      sealing: 'interval',
      blockTimeMs: options.blockTimeMs ?? 500,
      finalityLag: options.finalityLag ?? 2,
      genesisFile,
    }),
    startRedisBacking(options.redis, { appendOnly: 'everysec' }),
    startKubo(),
  ]);
  const { redis, cluster, sentinel } = backing;
  const common = {
    ...backing.env,
    FREQUENCY_API_WS_URL: devchain.url,
    PROVIDER_ID: '1',
    IPFS_ENDPOINT: kubo.apiUrl,
    IPFS_GATEWAY_URL: `${kubo.gatewayUrl}/ipfs/[CID]`,
    CACHE_KEY_PREFIX: 'pipeline',
  };
  const workerEnv = {
    ...common,
    PROVIDER_ACCOUNT_SEED_PHRASE: '//Alice',
    BATCH_INTERVAL_SECONDS: '1',
    READINESS_INTERVAL_MS: '250',
    // Webhook receivers of the tests listen on this machine's loopback interface.
    OUTBOUND_ALLOWED_DESTINATIONS: LOOPBACK_DESTINATIONS,
    ...options.workerEnv,
  };
  const [api, chain] = await Promise.all([
    spawnApi({ ...common, ...options.apiEnv }, options.apiLogs ? { output: options.apiLogs } : {}),
    connectChain({ url: devchain.url }),
  ]);
  const workers: ApiProcess[] = [];
  const startWorker = async (env: Record<string, string> = {}) => {
    const worker = await spawnWorker(
      { ...workerEnv, ...env },
      options.workerLogs ? { output: options.workerLogs } : {},
    );
    workers.push(worker);
    await waitUntil(async () => (await fetch(`${worker.url}/readyz`)).status === 200, 60_000, 'worker ready');
    return worker;
  };
  for (let index = 0; index < (options.workers ?? 1); index++) await startWorker();

  const request = async (referenceId: string) => {
    const answer = await callJson(api.url, 'GET', `/v1/requests/${referenceId}`);
    return answer.status === 200 ? (answer.body as RequestRecord) : undefined;
  };
  const apis: ApiProcess[] = [];
  return {
    devchain,
    redis,
    cluster,
    sentinel,
    startApi: async (env) => {
      const extra = await spawnApi({ ...common, ...env });
      apis.push(extra);
      await waitUntil(async () => (await fetch(`${extra.url}/readyz`)).status === 200, 60_000, 'api ready');
      return extra;
    },
    kubo,
    api,
    workers,
    chain,
    startWorker,
    request,
    settled: async (referenceIds, timeoutMs) => {
      const records = new Map<string, RequestRecord>();
      await waitUntil(
        async () => {
          for (const id of referenceIds) {
            if (records.has(id)) continue;
            const record = await request(id);
            if (record && (record.state === 'finalized' || record.state === 'failed')) records.set(id, record);
          }
          return records.size === referenceIds.length;
        },
        timeoutMs,
        () => `${referenceIds.length - records.size} of ${referenceIds.length} requests settled`,
      );
      return referenceIds.map((id) => records.get(id) as RequestRecord);
    },
    stop: async () => {
      await Promise.all(workers.map((worker) => worker.stop()));
      await Promise.all([api, ...apis].map((one) => one.stop()));
      await chain.close();
      await Promise.all([devchain.stop(), backing.stop(), kubo.stop()]);
      rmSync(folder, { recursive: true, force: true });
    },
  };
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
