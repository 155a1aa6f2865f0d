import { PullPolicy, Wait } from 'testcontainers';
import type { StackImages } from './images.js';
import { LoopbackContainer } from './loopbackContainer.js';

/** An image of the run, pulled each time when it is a registry's (the local stand-ins carry the same names). */
function container(images: StackImages, image: string): LoopbackContainer {
  const builder = new LoopbackContainer(image);
  return images.pull && image !== images.gateway ? builder.withPullPolicy(PullPolicy.alwaysPull()) : builder;
}

/** The chain, JSON-RPC on 9944 (published on 127.0.0.1): the gateway image's devchain or Frequency's node. */
export function chainContainer(images: StackImages, sealing: 'instant' | 'interval' = 'instant'): LoopbackContainer {
  const chain =
    images.chain.kind === 'devchain'
      ? container(images, images.chain.image)
          .withCommand(['devchain', '--host', '0.0.0.0', '--port', '9944', '--sealing', sealing])
          .withWaitStrategy(Wait.forLogMessage(/devchain: .*listening on/))
      : container(images, images.chain.image)
          .withEnvironment({ SEALING_MODE: sealing, SEALING_INTERVAL: '1' })
          .withWaitStrategy(Wait.forLogMessage(/Running JSON-RPC server/));
  return chain.withExposedPorts(9944).withStartupTimeout(120_000);
}

/** Redis on 6379, its append-only file on (a restarted container keeps what it had). */
export function redisContainer(images: StackImages): LoopbackContainer {
  return container(images, images.redis)
    .withCommand(['redis-server', '--protected-mode', 'no', '--appendonly', 'yes', '--save', ''])
    .withWaitStrategy(Wait.forLogMessage(/Ready to accept connections/));
}

/** Kubo, RPC API on 5001 and gateway on 8080; offline, so it dials nothing outside the run. */
export function kuboContainer(images: StackImages): LoopbackContainer {
  return container(images, images.kubo)
    .withEnvironment({ IPFS_PROFILE: 'test' })
    .withCommand(['daemon', '--offline', '--migrate=true'])
    .withWaitStrategy(Wait.forLogMessage(/Daemon is ready/))
    .withStartupTimeout(120_000);
}
