import { spawnDevchain } from '@frequency-gateway/devchain';
import { startKubo, startRedisServer } from '@frequency-gateway/devstack';
import { provisionProvider } from './provider.js';
import { GenericContainer, Wait, getContainerRuntimeClient, type StartedTestContainer } from 'testcontainers';

/** The backing services of an e2e run. */
export interface Stack {
  /** `containers` when a container runtime answered, else `local` processes. */
  mode: 'containers' | 'local';
  /** WebSocket URL of the Frequency chain (standalone node or devchain). */
  chainUrl: string;
  redisUrl: string;
  /** Kubo RPC API (IPFS_ENDPOINT) and HTTP gateway. */
  ipfsApiUrl: string;
  ipfsGatewayUrl: string;
  /** What runs each service, e.g. "devchain (local process)". */
  describe(): string;
  stop(): Promise<void>;
}

export interface StackOptions {
  /** Chain sealing; instant unless asked otherwise. */
  sealing?: 'instant' | 'interval';
  /** Finalized head trailing the best block (devchain only; a node container finalizes at once). */
  finalityLag?: number;
  /** Force a mode instead of probing for a container runtime (`E2E_STACK=local|containers` does the same). */
  mode?: 'containers' | 'local';
}

const IMAGES = {
  frequency: 'frequencychain/standalone-node:v2.0.1',
  redis: 'redis:7.4-alpine',
  kubo: 'ipfs/kubo:v0.43.0',
};

/** Whether a container runtime answers (Docker or Podman socket, DOCKER_HOST, testcontainers settings). */
async function containerRuntimeAnswers(): Promise<boolean> {
  try {
    const client = await getContainerRuntimeClient();
    await client.info;
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts chain, Redis and IPFS for an e2e suite: containers (the Frequency standalone node image, redis,
 * ipfs/kubo) when a container runtime answers, else local processes (the devchain CLI, redis-server, Kubo).
 * Either way //Alice's MSA is a staked provider. The same suites run on both; which one ran is printed.
 */
export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const forced = options.mode ?? (process.env.E2E_STACK as StackOptions['mode'] | undefined);
  const mode = forced ?? ((await containerRuntimeAnswers()) ? 'containers' : 'local');
  const stack = mode === 'containers' ? await containerStack(options) : await localStack(options);
  try {
    await provisionProvider(stack.chainUrl);
  } catch (error) {
    await stack.stop();
    throw error;
  }
  process.stdout.write(`e2e stack: ${stack.describe()}\n`);
  return stack;
}

async function containerStack(options: StackOptions): Promise<Stack> {
  const started: StartedTestContainer[] = [];
  try {
    const chain = await new GenericContainer(IMAGES.frequency)
      .withEnvironment({ SEALING_MODE: options.sealing ?? 'instant', SEALING_INTERVAL: '1' })
      .withExposedPorts(9944)
      .withWaitStrategy(Wait.forLogMessage(/Running JSON-RPC server/))
      .start();
    started.push(chain);
    const redis = await new GenericContainer(IMAGES.redis)
      .withExposedPorts(6379)
      .withWaitStrategy(Wait.forLogMessage(/Ready to accept connections/))
      .start();
    started.push(redis);
    const kubo = await new GenericContainer(IMAGES.kubo)
      .withExposedPorts(5001, 8080)
      .withWaitStrategy(Wait.forLogMessage(/Daemon is ready/))
      .start();
    started.push(kubo);
    const at = (container: StartedTestContainer, port: number) =>
      `${container.getHost()}:${container.getMappedPort(port)}`;
    return {
      mode: 'containers',
      chainUrl: `ws://${at(chain, 9944)}`,
      redisUrl: `redis://${at(redis, 6379)}`,
      ipfsApiUrl: `http://${at(kubo, 5001)}`,
      ipfsGatewayUrl: `http://${at(kubo, 8080)}`,
      describe: () => `containers (${IMAGES.frequency}, ${IMAGES.redis}, ${IMAGES.kubo})`,
      stop: async () => void (await Promise.all(started.map((container) => container.stop()))),
    };
  } catch (error) {
    await Promise.all(started.map((container) => container.stop()));
    throw error;
  }
}

async function localStack(options: StackOptions): Promise<Stack> {
  const chainOptions = { sealing: options.sealing ?? 'instant', finalityLag: options.finalityLag ?? 0 } as const;
  const results = await Promise.allSettled([spawnDevchain(chainOptions), startRedisServer(), startKubo()] as const);
  const stops = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value.stop] : []));
  const failed = results.find((result) => result.status === 'rejected');
  if (failed) {
    await Promise.allSettled(stops.map((stop) => stop()));
    throw failed.reason;
  }
  const [chain, redis, kubo] = results.map((result) => (result as PromiseFulfilledResult<unknown>).value) as [
    Awaited<ReturnType<typeof spawnDevchain>>,
    Awaited<ReturnType<typeof startRedisServer>>,
    Awaited<ReturnType<typeof startKubo>>,
  ];
  return {
    mode: 'local',
    chainUrl: chain.url,
    redisUrl: redis.url,
    ipfsApiUrl: kubo.apiUrl,
    ipfsGatewayUrl: kubo.gatewayUrl,
    describe: () => 'local processes (devchain, redis-server, Kubo)',
    stop: async () => void (await Promise.all(stops.map((stop) => stop()))),
  };
}
