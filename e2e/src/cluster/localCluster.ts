// The project's local cluster (dev/cluster, `make cluster`) as the cluster suites use it: its kubectl, a
// namespace of each suite's own, port-forwards to loopback. Every request a suite makes goes to 127.0.0.1; what it
// asks of the cluster goes through the API server, as kubectl does.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { waitUntil } from '@frequency-gateway/devstack';

export const REPOSITORY_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const KUBECTL = `${REPOSITORY_ROOT}dev/cluster/kubectl`;

export interface CommandOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  input?: string;
}

/** Runs a command to its end; its stdout, or an error naming the command with the end of its output. */
export function runCommand(file: string, args: string[], options: CommandOptions = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    // stdin only when there is input: a command that exits without reading it must not fail the write (EPIPE).
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.once('error', reject);
    child.once('close', (code, signal) => {
      const out = Buffer.concat(stdout).toString();
      if (code === 0) return resolve(out);
      const tail = `${out}${Buffer.concat(stderr).toString()}`.trim().split('\n').slice(-20).join('\n');
      reject(new Error(`${file} ${args.join(' ')} exited with ${code ?? signal}:\n${tail}`));
    });
    if (options.input !== undefined) {
      // Its exit status says whether it failed; an unread input is no error of its own.
      child.stdin?.once('error', () => undefined);
      child.stdin?.end(options.input);
    }
  });
}

export const kubectl = (args: string[], input?: string) =>
  runCommand(KUBECTL, args, input === undefined ? {} : { input });

/** Fails with what to do when the suite cannot reach the local cluster (it is root's: make cluster). */
export async function requireLocalCluster(): Promise<void> {
  if (process.getuid?.() !== 0)
    throw new Error('the cluster suites run as root, like the local cluster (make cluster)');
  await kubectl(['get', '--raw', '/readyz']).catch((error: unknown) => {
    throw new Error(`the local cluster is not up (make cluster starts it): ${String(error)}`);
  });
}

/** A namespace of the suite's own, enforcing restricted Pod Security as a production namespace would. */
export async function createNamespace(prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await kubectl(
    ['apply', '-f', '-'],
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name,
        labels: {
          'pod-security.kubernetes.io/enforce': 'restricted',
          'frequency-gateway.local/suite': prefix,
        },
      },
    }),
  );
  return name;
}

export async function deleteNamespace(name: string): Promise<void> {
  await kubectl(['delete', 'namespace', name, '--ignore-not-found', '--wait=false']);
}

export interface PortForward {
  /** http://127.0.0.1:<local port> */
  url: string;
  stop(): Promise<void>;
}

/** `kubectl port-forward` of a resource's port to a free port on 127.0.0.1. */
export async function portForward(namespace: string, resource: string, port: number): Promise<PortForward> {
  const child = spawn(KUBECTL, ['-n', namespace, 'port-forward', '--address', '127.0.0.1', resource, `:${port}`], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  let localPort: number | undefined;
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => {
      output.push(line);
      const forwarding = /^Forwarding from 127\.0\.0\.1:(\d+) ->/.exec(line);
      if (forwarding) localPort = Number(forwarding[1]);
    });
  }
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };
  try {
    await waitUntil(
      async () => localPort !== undefined || child.exitCode !== null,
      30_000,
      () => `kubectl port-forward ${resource} in ${namespace}: ${output.join(' | ')}`,
    );
    if (localPort === undefined) throw new Error(`kubectl port-forward ${resource} exited: ${output.join(' | ')}`);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `http://127.0.0.1:${localPort}`, stop };
}

/** GET a URL on loopback; undefined while nothing answers there (a port-forward reconnecting, a Pod starting). */
export async function fetchText(url: string): Promise<{ status: number; body: string } | undefined> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    return { status: response.status, body: await response.text() };
  } catch {
    return undefined;
  }
}
