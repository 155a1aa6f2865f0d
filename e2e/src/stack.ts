import { startGatewayBacking } from '@frequency-gateway/devstack/gateway';
import { provisionProvider } from './provider.js';
import { randomBytes } from 'node:crypto';
import type { StartedTestContainer } from 'testcontainers';
import { chainContainer, kuboContainer, redisContainer } from './containers/backingContainers.js';
import { missingContainerPrerequisites, useProjectDocker } from './containers/docker.js';
import { imageSource, prepareImages } from './containers/images.js';
import type { LoopbackContainer } from './containers/loopbackContainer.js';

/** The backing services of an e2e run. */
export interface Stack {
  /** `containers` when the project's dockerd can run (root, docker.io), else `local` processes. */
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
  /** Force a mode instead of checking for the container runtime (`E2E_STACK=local|containers` does the same). */
  mode?: 'containers' | 'local';
}

/**
 * Whether the project's container runtime can be used: root and Debian's docker.io (and what the local images are
 * made of), as the containers e2e suites need them.
 */
function containersPossible(): boolean {
  return missingContainerPrerequisites(imageSource() === 'local').length === 0;
}

/**
 * Starts chain, Redis and IPFS for an e2e suite: containers on the project's dockerd when it can run (the
 * devchain of the gateway image and the Redis and Kubo stand-ins made here, or the published images with
 * E2E_IMAGES=published), else local processes (the devchain CLI, redis-server, Kubo).
 * Either way //Alice's MSA is a staked provider. The same suites run on both; which one ran is printed.
 */
export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const forced = options.mode ?? (process.env.E2E_STACK as StackOptions['mode'] | undefined);
  const mode = forced ?? (containersPossible() ? 'containers' : 'local');
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
  await useProjectDocker();
  const images = await prepareImages(imageSource());
  // Named and labelled like the journeys' containers, so that what a run left behind is known to be the suites'.
  const run = `fg-e2e-stack-${randomBytes(3).toString('hex')}`;
  const mine = (role: string, container: LoopbackContainer) =>
    container.withName(`${run}-${role}`).withLabels({ 'org.frequency-gateway.e2e-run': run }).start();
  const results = await Promise.allSettled([
    mine('chain', chainContainer(images, options.sealing ?? 'instant')),
    mine('redis', redisContainer(images).withExposedPorts(6379)),
    mine('kubo', kuboContainer(images).withExposedPorts(5001, 8080)),
  ]);
  const started = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const stop = async () => void (await Promise.allSettled(started.map((container) => container.stop())));
  const failed = results.find((result) => result.status === 'rejected');
  if (failed) {
    await stop();
    throw failed.reason;
  }
  const [chain, redis, kubo] = started as [StartedTestContainer, StartedTestContainer, StartedTestContainer];
  const at = (container: StartedTestContainer, port: number) => `127.0.0.1:${container.getMappedPort(port)}`;
  return {
    mode: 'containers',
    chainUrl: `ws://${at(chain, 9944)}`,
    redisUrl: `redis://${at(redis, 6379)}`,
    ipfsApiUrl: `http://${at(kubo, 5001)}`,
    ipfsGatewayUrl: `http://${at(kubo, 8080)}`,
    describe: () => `containers (${images.source} images: ${images.chain.image}, ${images.redis}, ${images.kubo})`,
    stop,
  };
}

async function localStack(options: StackOptions): Promise<Stack> {
  const backing = await startGatewayBacking({
    sealing: options.sealing ?? 'instant',
    finalityLag: options.finalityLag ?? 0,
  });
  return {
    mode: 'local',
    chainUrl: backing.chain.url,
    redisUrl: backing.redis.url,
    ipfsApiUrl: backing.kubo!.apiUrl,
    ipfsGatewayUrl: backing.kubo!.gatewayUrl,
    describe: () => 'local processes (devchain, redis-server, Kubo)',
    stop: backing.stop,
  };
}
