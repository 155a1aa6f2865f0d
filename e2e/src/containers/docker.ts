import { accessSync, constants } from 'node:fs';
import { findExecutable, findTool } from '@frequency-gateway/devstack';
import { must, REPOSITORY, run, type CommandResult } from '../commands.js';

/** Debian's Docker client (dev/images/lib.sh): a newer one earlier on PATH may lack BuildKit's buildx. */
export const DOCKER = '/usr/bin/docker';

/** Whether the file at `path` may be executed by this process. */
export const executable = (path: string) => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/**
 * What is missing to run the e2e suites in containers, each with how to get it (empty: nothing). `localImages`:
 * the Redis and Kubo stand-ins are built here too (E2E_IMAGES=local), which needs redis-server, Kubo and busybox.
 */
export function missingContainerPrerequisites(localImages: boolean): string[] {
  const missing: string[] = [];
  if (process.getuid?.() !== 0)
    missing.push('root: the suites start the project dockerd (dev/images/docker-up) and build images with it');
  if (!executable(DOCKER) || !executable('/usr/sbin/dockerd'))
    missing.push(`${DOCKER} and /usr/sbin/dockerd (Debian's docker.io): run \`dev/cluster/install-packages\``);
  if (localImages) {
    if (!findExecutable('redis-server'))
      missing.push('redis-server (the Redis stand-in image): run `dev/cluster/install-packages`');
    if (!findTool('ipfs', 'IPFS_BIN')) missing.push('Kubo (the IPFS stand-in image): run `make tools`');
    if (!executable('/bin/busybox'))
      missing.push('/bin/busybox (busybox-static, the stand-in images): run `dev/cluster/install-packages`');
  }
  return missing;
}

/**
 * Points this process (and testcontainers in it) at the project's dockerd, started by dev/images/docker-up unless
 * it answers already, unless DOCKER_HOST names another engine. Ryuk stays off (its image cannot be pulled here; the
 * suites remove what they start themselves), and mapped ports are read on 127.0.0.1, where they are published.
 */
export async function useProjectDocker(): Promise<void> {
  if (!process.env.DOCKER_HOST) {
    const printed = await must(`${REPOSITORY}dev/images/docker-up`, [], { timeoutMs: 120_000 });
    const host = /DOCKER_HOST=(\S+)/.exec(printed)?.[1];
    if (!host) throw new Error(`dev/images/docker-up printed no DOCKER_HOST: ${printed}`);
    process.env.DOCKER_HOST = host;
  }
  process.env.TESTCONTAINERS_RYUK_DISABLED = 'true';
  process.env.TESTCONTAINERS_HOST_OVERRIDE = '127.0.0.1';
}

const dockerEnv = () => ({ DOCKER_HOST: process.env.DOCKER_HOST ?? '', DOCKER_BUILDKIT: '1' });

/** `docker ARGS` on the engine of useProjectDocker(); resolves with stdout, fails with what it printed. */
export const docker = (args: string[], timeoutMs = 120_000): Promise<string> =>
  must(DOCKER, args, { env: dockerEnv(), timeoutMs });

/** `docker ARGS` whatever its exit code. */
export const tryDocker = (args: string[], timeoutMs = 120_000): Promise<CommandResult> =>
  run(DOCKER, args, { env: dockerEnv(), timeoutMs });

/** The host port a container's `port` (e.g. `8080/tcp`) is published on now (`docker start` publishes anew). */
export async function publishedPort(container: string, port: string): Promise<number> {
  const printed = (await docker(['port', container, port])).trim();
  const published = Number(printed.split('\n')[0]?.split(':').pop());
  if (!Number.isInteger(published) || published <= 0)
    throw new Error(`docker port ${container} ${port} printed no port: ${printed}`);
  return published;
}
