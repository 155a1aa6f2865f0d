import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnDevchain, type DevchainProcess } from '@frequency-gateway/devchain';
import { startKubo, type LocalKubo } from '../kubo.js';
import { startRedisBacking, type LocalRedisBacking, type RedisBackingMode } from '../redisBacking.js';
import type { RedisServerOptions } from '../redisServer.js';
import { startRpcProxy, type RpcProxy } from '../rpcProxy.js';

/** What the gateway's components run on, each a local process of its own: the devchain, Redis and Kubo. */
export interface GatewayBacking extends Omit<LocalRedisBacking, 'env' | 'stop'> {
  chain: DevchainProcess;
  /** Kubo, unless `kubo: false`. */
  kubo: LocalKubo | undefined;
  /** With `chainNodes`: the proxies that stand for the chain's nodes, in FREQUENCY_API_WS_URL's order. */
  nodes: RpcProxy[];
  /**
   * What every component is given to reach them: the Redis variables, FREQUENCY_API_WS_URL, IPFS_ENDPOINT and
   * IPFS_GATEWAY_URL (with Kubo), and the devchain's provider (//Alice controls MSA 1).
   */
  env: Record<string, string>;
  /**
   * With `keepChain`: ends the devchain (SIGKILL by default, as a crash) and starts it again on the same port with
   * the chain it kept; resolves once it serves again, with `chain` the new process.
   */
  restartChain(signal?: NodeJS.Signals): Promise<void>;
  /** Stops what was started; a test may have stopped some of it already. */
  stop(): Promise<void>;
}

export interface GatewayBackingOptions {
  /** The devchain's sealing: instant by default. */
  sealing?: 'instant' | 'interval';
  /** With interval sealing: the block time (the devchain's default otherwise) and how far finality trails. */
  blockTimeMs?: number;
  finalityLag?: number;
  /** Extra genesis (users and delegations), as the devchain's --genesis file takes it. */
  genesis?: object;
  /** A single redis-server (the default), a Redis Cluster, or a primary with replicas and Sentinels. */
  redis?: RedisBackingMode;
  /** A single server's own settings, e.g. an append-only file (as the chart and the e2e Redis container run it). */
  redisServer?: RedisServerOptions;
  /** Kubo for IPFS (the default); false when the components keep content otherwise (IPFS_EMBEDDED_DIR). */
  kubo?: boolean;
  /**
   * How many nodes the components are given (FREQUENCY_API_WS_URL): loopback proxies in front of the one devchain
   * that a test can kill, revive, mute or stall (`nodes`). None by default: the devchain's own URL.
   */
  chainNodes?: number;
  /** Keep the devchain's chain on disk (its `--base-path`, in a temporary folder), so that it can be restarted. */
  keepChain?: boolean;
}

/**
 * Starts the devchain (as a process), Redis and Kubo together, on ports nothing else uses. Whatever fails on the
 * way, what was started is stopped again.
 */
export async function startGatewayBacking(options: GatewayBackingOptions = {}): Promise<GatewayBacking> {
  const folder = options.genesis || options.keepChain ? mkdtempSync(join(tmpdir(), 'gateway-backing-')) : undefined;
  const genesisFile = options.genesis && folder && join(folder, 'genesis.json');
  if (genesisFile) writeFileSync(genesisFile, JSON.stringify(options.genesis));
  const devchainOptions = {
    sealing: options.sealing ?? 'instant',
    finalityLag: options.finalityLag ?? 0,
    ...(options.blockTimeMs === undefined ? {} : { blockTimeMs: options.blockTimeMs }),
    ...(genesisFile ? { genesisFile } : {}),
    ...(options.keepChain && folder ? { basePath: join(folder, 'chain') } : {}),
  } as const;
  const results = await Promise.allSettled([
    spawnDevchain(devchainOptions),
    startRedisBacking(options.redis, options.redisServer),
    options.kubo === false ? Promise.resolve(undefined) : startKubo(),
  ] as const);
  const [chain, redis, kubo] = results.map((result) => (result.status === 'fulfilled' ? result.value : undefined)) as [
    DevchainProcess | undefined,
    LocalRedisBacking | undefined,
    LocalKubo | undefined,
  ];
  const nodes =
    chain && options.chainNodes
      ? await Promise.all(Array.from({ length: options.chainNodes }, () => startRpcProxy(chain.url)))
      : [];
  let current = chain;
  const stop = async () => {
    await Promise.allSettled([current?.stop(), redis?.stop(), kubo?.stop(), ...nodes.map((node) => node.close())]);
    if (folder) rmSync(folder, { recursive: true, force: true });
  };
  const failed = results.find((result) => result.status === 'rejected');
  if (failed) {
    await stop();
    throw failed.reason;
  }
  const backing: GatewayBacking = {
    chain: chain!,
    redis: redis!.redis,
    cluster: redis!.cluster,
    sentinel: redis!.sentinel,
    kubo,
    nodes,
    env: {
      ...redis!.env,
      FREQUENCY_API_WS_URL: nodes.length > 0 ? nodes.map((node) => node.url).join(',') : chain!.url,
      ...(kubo ? { IPFS_ENDPOINT: kubo.apiUrl, IPFS_GATEWAY_URL: `${kubo.gatewayUrl}/ipfs/[CID]` } : {}),
      PROVIDER_ID: '1',
      PROVIDER_ACCOUNT_SEED_PHRASE: '//Alice',
    },
    restartChain: async (signal = 'SIGKILL') => {
      if (!devchainOptions.basePath) throw new Error('restartChain needs the backing started with keepChain');
      await backing.chain.stop(signal);
      current = await spawnDevchain({ ...devchainOptions, port: Number(new URL(backing.chain.url).port) });
      backing.chain = current;
    },
    stop,
  };
  return backing;
}
