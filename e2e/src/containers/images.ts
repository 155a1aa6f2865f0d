import { REPOSITORY, must } from '../commands.js';
import { docker, tryDocker } from './docker.js';

/** Where the images of a containers run come from: built here (`local`) or pulled from their registries. */
export type ImageSource = 'local' | 'published';

/** The published images, the names the local stand-ins also carry (dev/images/standins). */
export const PUBLISHED = {
  frequency: 'frequencychain/standalone-node:v2.0.1',
  redis: 'redis:7.4-alpine',
  kubo: 'ipfs/kubo:v0.43.0',
} as const;

/** What a containers run starts, by role. */
export interface StackImages {
  source: ImageSource;
  /** The gateway image of this checkout (content tag), for the six components and the webhook receiver. */
  gateway: string;
  /** The chain: the gateway image's devchain (local) or Frequency's standalone node (published). */
  chain: { image: string; kind: 'devchain' | 'standalone-node' };
  redis: string;
  kubo: string;
  /** Whether the registry images are pulled each run (published: the stand-ins carry the same names). */
  pull: boolean;
}

/** E2E_IMAGES=local|published (default local); anything else is refused, naming the setting. */
export function imageSource(): ImageSource {
  const value = process.env.E2E_IMAGES ?? 'local';
  if (value !== 'local' && value !== 'published')
    throw new Error(`E2E_IMAGES must be local or published, not ${JSON.stringify(value)}`);
  return value;
}

/**
 * Builds the gateway image from this checkout's Dockerfile (dev/images/gateway, as `make image`; Docker's cache
 * makes it a no-op when nothing changed) and names it by its content, `frequency-gateway:e2e-<12 hex digits>`, so
 * that runs of different checkouts on one dockerd never start each other's code. With `local` images it also
 * builds the Redis and Kubo stand-ins when missing or outdated (dev/images/standins, as `make images`).
 */
export async function prepareImages(source: ImageSource): Promise<StackImages> {
  const building = `frequency-gateway:e2e-build-${process.pid}`;
  await must(`${REPOSITORY}dev/images/gateway`, [building], {
    timeoutMs: 1_800_000,
    env: { DOCKER_HOST: process.env.DOCKER_HOST ?? '' },
  });
  const id = (await docker(['image', 'inspect', '--format', '{{.Id}}', building])).trim();
  const gateway = `frequency-gateway:e2e-${id.replace(/^sha256:/, '').slice(0, 12)}`;
  await docker(['tag', building, gateway]);
  await tryDocker(['rmi', building]);
  if (source === 'published')
    return {
      source,
      gateway,
      chain: { image: PUBLISHED.frequency, kind: 'standalone-node' },
      redis: PUBLISHED.redis,
      kubo: PUBLISHED.kubo,
      pull: true,
    };
  await must(`${REPOSITORY}dev/images/standins`, [], {
    timeoutMs: 600_000,
    env: { DOCKER_HOST: process.env.DOCKER_HOST ?? '' },
  });
  return {
    source,
    gateway,
    chain: { image: gateway, kind: 'devchain' },
    redis: PUBLISHED.redis,
    kubo: PUBLISHED.kubo,
    pull: false,
  };
}
