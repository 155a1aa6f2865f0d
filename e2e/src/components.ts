import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { freePort, waitUntil } from '@frequency-gateway/devstack';

const GATEWAY = fileURLToPath(new URL('../../bin/gateway.js', import.meta.url));

export type Service = 'account' | 'content-publishing' | 'content-watcher';
export type Role = 'api' | 'worker';

/** One component of the gateway as its own process, as `make dev` and the image run it. */
export interface ComponentProcess {
  /** e.g. account-worker */
  name: string;
  url: string;
  pid: number;
  /** Every line it printed on stdout, parsed as JSON (other lines kept as {text}). */
  lines: Record<string, unknown>[];
  /** Whether it is still running. */
  running(): boolean;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM (a clean stop, the default) or SIGKILL; resolves with how it exited. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts `gateway <service> <role>` from the TypeScript sources on a free port and resolves once its /livez
 * answers: the process is up, whatever its dependencies say.
 */
export async function startComponentProcess(
  service: Service,
  role: Role,
  env: Record<string, string>,
): Promise<ComponentProcess> {
  const port = await freePort();
  const portVariable = role === 'api' ? 'API_PORT' : 'WORKER_API_PORT';
  const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=source', GATEWAY, service, role], {
    env: { ...process.env, LOG_PRETTY: 'false', ...env, [portVariable]: String(port) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const name = `${service}-${role}`;
  const lines: Record<string, unknown>[] = [];
  createInterface({ input: child.stdout }).on('line', (text) => {
    try {
      lines.push(JSON.parse(text) as Record<string, unknown>);
    } catch {
      lines.push({ text });
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const url = `http://127.0.0.1:${port}`;
  // Generous: on a loaded two-core machine, starting several TypeScript processes at once takes a while.
  const answer = await waitUntil(
    async () => {
      if (child.exitCode !== null) return 'exited';
      return (await fetch(`${url}/livez`)).ok && 'live';
    },
    120_000,
    `${name} to answer /livez`,
    200,
  ).catch((error: unknown) => {
    child.kill('SIGKILL');
    throw error;
  });
  if (answer === 'exited') throw new Error(`${name} exited with ${child.exitCode} before answering`);
  return {
    name,
    url,
    pid: child.pid as number,
    lines,
    running: () => child.exitCode === null && child.signalCode === null,
    exited,
    stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
