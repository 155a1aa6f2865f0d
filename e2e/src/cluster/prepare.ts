import { homedir } from 'node:os';
import { join } from 'node:path';
import { findExecutable, findTool } from '@frequency-gateway/devstack';
import { DOCKER, executable } from '../containers/docker.js';
import { ctrCluster, helmBinary, must, REPOSITORY, run } from '../commands.js';

/** The project's own dockerd, which dev/images starts when DOCKER_HOST is not set. */
const PROJECT_DOCKER_HOST = 'unix:///run/frequency-gateway-docker.sock';
/** The name `make images` builds and loads; each run then uses the content tag of what it built. */
const BUILD_NAME = 'frequency-gateway:cluster-e2e';
export const IMAGE_REPOSITORY = 'frequency-gateway';

/** The gateway image in the cluster's containerd: the chart's image.repository and image.tag. */
export interface ClusterImage {
  repository: string;
  /** e2e-<first 12 hex digits of the Docker image id>: the same code gives the same tag. */
  tag: string;
}

/** What is missing to run the cluster suites, each with how to get it (empty: nothing). */
export function missingPrerequisites(): string[] {
  const missing: string[] = [];
  if (process.getuid?.() !== 0)
    missing.push(
      'root: the suites start the local cluster (containerd, the kubelet, iptables) and build the image with the project dockerd; run the tests as root',
    );
  const helm = helmBinary();
  if (!helm) missing.push('helm (Helm 4): run `make tools`');
  const clusterBin = join(
    process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'),
    'frequency-gateway',
    'cluster',
    'bin',
  );
  for (const binary of ['kube-apiserver', 'kubelet', 'kubectl', 'etcd'])
    if (!executable(join(clusterBin, binary)))
      missing.push(
        `${clusterBin}/${binary}: run \`dev/cluster/build\` (or \`make cluster\`; ~30 min cold, cached after)`,
      );
  if (!executable(DOCKER) || !executable('/usr/sbin/dockerd'))
    missing.push(`${DOCKER} and /usr/sbin/dockerd (Debian's docker.io): run \`dev/cluster/install-packages\``);
  if (!findExecutable('redis-server'))
    missing.push('redis-server (the Redis stand-in image): run `dev/cluster/install-packages`');
  if (!findTool('ipfs', 'IPFS_BIN')) missing.push('Kubo (the IPFS stand-in image): run `make tools`');
  return missing;
}

/** Fails with one message naming every missing prerequisite and how to get it. */
export function checkPrerequisites(): void {
  const missing = missingPrerequisites();
  if (missing.length === 0) return;
  throw new Error(
    `the cluster suites cannot run on this machine (they never skip; CI=${process.env.CI ?? 'unset'}). Missing:\n` +
      missing.map((entry) => `  - ${entry}`).join('\n') +
      '\nTo run the other suites only: npm test -- --selectProjects <project> (every project but cluster).',
  );
}

/** Starts the local cluster unless it is up (dev/cluster/up is idempotent); fails with what it printed. */
export async function clusterUp(): Promise<void> {
  const result = await run(`${REPOSITORY}dev/cluster/up`, [], { timeoutMs: 300_000 });
  if (result.code !== 0)
    throw new Error(
      `dev/cluster/up failed (${result.code}): the local cluster did not start:\n${result.stderr}${result.stdout}`,
    );
}

const dockerEnv = () => ({ DOCKER_HOST: process.env.DOCKER_HOST ?? PROJECT_DOCKER_HOST, DOCKER_BUILDKIT: '1' });

/**
 * Builds the gateway image from the Dockerfile and the Redis and Kubo stand-ins (`make images`), loads them into the
 * cluster, and gives the gateway image its content tag there. Unchanged code builds from cache and loads nothing.
 */
export async function prepareImages(): Promise<ClusterImage> {
  await must('make', ['--no-print-directory', 'images', `IMAGE=${BUILD_NAME}`], { timeoutMs: 1_800_000 });
  return retag(BUILD_NAME, 'e2e-');
}

/**
 * Gives an image Docker holds a tag of its content (`<prefix><12 hex digits of its id>`) and makes the cluster know
 * it under that tag too (dev/images/load tags what containerd already holds, without copying it again).
 */
export async function retag(image: string, prefix: string): Promise<ClusterImage> {
  const id = (await must(DOCKER, ['image', 'inspect', '--format', '{{.Id}}', image], { env: dockerEnv() })).trim();
  const tag = `${prefix}${id.replace(/^sha256:/, '').slice(0, 12)}`;
  await must(DOCKER, ['tag', image, `${IMAGE_REPOSITORY}:${tag}`], { env: dockerEnv() });
  await must(`${REPOSITORY}dev/images/load`, [`${IMAGE_REPOSITORY}:${tag}`], { env: dockerEnv() });
  return { repository: IMAGE_REPOSITORY, tag };
}

/** Removes a tag from Docker and from the cluster's containerd (the image stays under its other names). */
export async function untag(image: ClusterImage): Promise<void> {
  await run(DOCKER, ['rmi', `${image.repository}:${image.tag}`], { env: dockerEnv() });
  await ctrCluster(['images', 'rm', `docker.io/library/${image.repository}:${image.tag}`]);
}
