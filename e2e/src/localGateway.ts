import { spawnDevchain, type DevchainProcess } from '@frequency-gateway/devchain';
import { startKubo, startRedisServer, waitUntil, type LocalKubo, type LocalRedis } from '@frequency-gateway/devstack';
import { startComponentProcess, type ComponentProcess, type Role, type Service } from './components.js';

export const GATEWAY_COMPONENTS: readonly (readonly [Service, Role])[] = [
  ['account', 'api'],
  ['account', 'worker'],
  ['content-publishing', 'api'],
  ['content-publishing', 'worker'],
  ['content-watcher', 'api'],
  ['content-watcher', 'worker'],
];

/** The whole gateway on this machine: six component processes on a devchain, a redis-server and Kubo of its own. */
export interface LocalGateway {
  /** By name, e.g. `account-api`. */
  components: Record<string, ComponentProcess>;
  chainUrl: string;
  redisUrl: string;
  ipfsApiUrl: string;
  /** Kubo's HTTP gateway (`/ipfs/<cid>`). */
  ipfsGatewayUrl: string;
  /** Stops the components (SIGTERM) and what they ran on; resolves with each component's exit. */
  stop(): Promise<Record<string, { code: number | null; signal: NodeJS.Signals | null }>>;
}

export interface LocalGatewayOptions {
  /** More environment for every component (it wins over the defaults below). */
  env?: Record<string, string>;
  /** More environment for the components of one service (it wins over `env`). */
  serviceEnv?: Partial<Record<Service, Record<string, string>>>;
  sealing?: 'instant' | 'interval';
  /** With interval sealing: the block time (the devchain's default otherwise) and how far finality trails. */
  blockTimeMs?: number;
  finalityLag?: number;
}

/**
 * Starts the backing services and the six components as processes, as `make dev` does but with Kubo for IPFS and
 * nothing on fixed ports, and resolves once every component is ready.
 */
export async function startLocalGateway(options: LocalGatewayOptions = {}): Promise<LocalGateway> {
  const started: { chain?: DevchainProcess; redis?: LocalRedis; kubo?: LocalKubo } = {};
  const components: Record<string, ComponentProcess> = {};
  const stopBacking = async () => {
    await Promise.allSettled([started.chain?.stop(), started.redis?.stop(), started.kubo?.stop()]);
  };
  try {
    [started.chain, started.redis, started.kubo] = await Promise.all([
      spawnDevchain({
        sealing: options.sealing ?? 'instant',
        ...(options.blockTimeMs === undefined ? {} : { blockTimeMs: options.blockTimeMs }),
        ...(options.finalityLag === undefined ? {} : { finalityLag: options.finalityLag }),
      }),
      startRedisServer(),
      startKubo(),
    ]);
    const env = {
      REDIS_URL: started.redis.url,
      FREQUENCY_API_WS_URL: started.chain.url,
      IPFS_ENDPOINT: started.kubo.apiUrl,
      IPFS_GATEWAY_URL: `${started.kubo.gatewayUrl}/ipfs/[CID]`,
      // The devchain's provider: //Alice controls MSA 1.
      PROVIDER_ID: '1',
      PROVIDER_ACCOUNT_SEED_PHRASE: '//Alice',
      LOG_LEVEL: 'warn',
      ...options.env,
    };
    for (const process of await Promise.all(
      GATEWAY_COMPONENTS.map(([service, role]) =>
        startComponentProcess(service, role, { ...env, ...options.serviceEnv?.[service] }),
      ),
    )) {
      components[process.name] = process;
    }
    for (const component of Object.values(components)) {
      const answer = await waitUntil(
        async () => {
          if (!component.running()) return 'exited';
          return (await fetch(`${component.url}/readyz`)).ok && 'ready';
        },
        90_000,
        `${component.name} to be ready`,
        250,
      );
      if (answer === 'exited') throw new Error(`${component.name} exited before it was ready`);
    }
  } catch (error) {
    await Promise.allSettled(Object.values(components).map((component) => component.stop('SIGKILL')));
    await stopBacking();
    throw error;
  }
  return {
    components,
    chainUrl: started.chain.url,
    redisUrl: started.redis.url,
    ipfsApiUrl: started.kubo.apiUrl,
    ipfsGatewayUrl: started.kubo.gatewayUrl,
    stop: async () => {
      const names = Object.keys(components);
      const exits = await Promise.all(names.map((name) => components[name]!.stop()));
      await stopBacking();
      return Object.fromEntries(names.map((name, index) => [name, exits[index]!]));
    },
  };
}
