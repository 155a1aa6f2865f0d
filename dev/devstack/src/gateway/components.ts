import { fileURLToPath } from 'node:url';
import { spawnServer, waitUntil, type ServerProcess } from '../processes.js';

/** The image's entrypoint, which runs one component: `gateway <service> <role>`. */
const GATEWAY = fileURLToPath(new URL('../../../../bin/gateway.js', import.meta.url));

export type Service = 'account' | 'content-publishing' | 'content-watcher';
export type Role = 'api' | 'worker';

/** The six components of the gateway. */
export const GATEWAY_COMPONENTS: readonly (readonly [Service, Role])[] = [
  ['account', 'api'],
  ['account', 'worker'],
  ['content-publishing', 'api'],
  ['content-publishing', 'worker'],
  ['content-watcher', 'api'],
  ['content-watcher', 'worker'],
];

/** One component of the gateway as its own process, as `make dev` and the image run it. */
export interface ComponentProcess extends ServerProcess {
  /** e.g. account-worker */
  name: string;
}

export interface ComponentProcessOptions {
  /** From dist/ as the image runs it (after `make build`), instead of the sources through tsx. */
  compiled?: boolean;
  /** More Node arguments, e.g. --cpu-prof. */
  nodeArgs?: string[];
  /** An array each line it prints on stdout (its log) is appended to as well. */
  output?: string[];
}

/**
 * Starts `gateway <service> <role>` on a free port (API_PORT, or WORKER_API_PORT for a worker's health and
 * metrics) and resolves once its /livez answers: the process is up, whatever its dependencies say.
 */
export async function startComponentProcess(
  service: Service,
  role: Role,
  env: Record<string, string>,
  options: ComponentProcessOptions = {},
): Promise<ComponentProcess> {
  const name = `${service}-${role}`;
  const node = options.compiled ? [] : ['--import', 'tsx', '--conditions=source'];
  const server = await spawnServer([GATEWAY, service, role], env, {
    node: [...node, ...(options.nodeArgs ?? [])],
    portVariable: role === 'api' ? 'API_PORT' : 'WORKER_API_PORT',
    name,
    ...(options.output ? { output: options.output } : {}),
  });
  return { ...server, name };
}

/** Resolves once the component answers /readyz with 200; fails at once when it exits first. */
export async function untilReady(component: ComponentProcess, timeoutMs = 90_000): Promise<void> {
  const answer = await waitUntil(
    async () => {
      if (!component.running()) return 'exited';
      return (await fetch(`${component.url}/readyz`)).status === 200 && 'ready';
    },
    timeoutMs,
    `${component.name} to be ready`,
    250,
  );
  if (answer === 'exited') throw new Error(`${component.name} exited before it was ready`);
}
