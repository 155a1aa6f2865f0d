import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findExecutable } from './findExecutable.js';
import { freePort } from './freePort.js';

export class ToolMissingError extends Error {
  constructor(tool: string, hint: string) {
    super(`${tool} is not installed. ${hint}`);
    this.name = 'ToolMissingError';
  }
}

export const REDIS_INSTALL_HINT =
  'Install it with `sudo apt-get install redis-server` (Debian/Ubuntu) or `brew install redis` (macOS).';

export interface RedisServerOptions {
  /** requirepass; the URL then carries it. */
  password?: string;
  port?: number;
  /** Where the server keeps its files; a fresh temporary folder by default. */
  dir?: string;
  /**
   * Keep the data in an append-only file, as the Helm chart runs Redis, so that a restart (or `kill` and
   * `restart`) keeps it: `always` fsyncs every write, `everysec` once a second. Default: nothing is kept.
   */
  appendOnly?: 'always' | 'everysec';
  /** More server arguments, as redis-server takes them (`['--cluster-enabled', 'yes']`, `['--replicaof', …]`). */
  args?: string[];
}

export interface LocalRedis {
  url: string;
  port: number;
  pid(): number | undefined;
  /** Ends the server with SIGKILL (a crash) or SIGTERM (a clean stop). */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port, after a kill. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

function waitForReady(child: ChildProcess, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        child.stdout?.off('data', onData);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) =>
      reject(new Error(`redis-server on port ${port} exited with ${code}: ${output.slice(-500)}`)),
    );
    child.once('error', reject);
  });
}

/** Runs a private redis-server on a free loopback port, for tests and `make dev`. Nothing is persisted unless asked. */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<LocalRedis> {
  const binary = process.env.REDIS_SERVER_BIN ?? findExecutable('redis-server');
  if (!binary) throw new ToolMissingError('redis-server', REDIS_INSTALL_HINT);
  const ownDir = options.dir === undefined;
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'gateway-redis-'));
  let port = options.port ?? (await freePort());
  let child: ChildProcess | undefined;

  const launch = async () => {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir];
    if (options.appendOnly) args.push('--appendonly', 'yes', '--appendfsync', options.appendOnly);
    else args.push('--appendonly', 'no');
    if (options.password) args.push('--requirepass', options.password);
    args.push(...(options.args ?? []));
    child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    await waitForReady(child, port);
    child.stdout?.resume();
    child.stderr?.resume();
  };

  for (let attempt = 1; ; attempt++) {
    try {
      await launch();
      break;
    } catch (error) {
      // Another process took the port between our probe and the server's bind: try another one.
      if (attempt >= 5 || options.port !== undefined) throw error;
      port = await freePort();
    }
  }

  const kill = async (signal: NodeJS.Signals = 'SIGKILL') => {
    const current = child;
    if (!current || current.exitCode !== null || current.signalCode !== null) return;
    const exited = new Promise((resolve) => current.once('exit', resolve));
    current.kill(signal);
    await exited;
  };
  const auth = options.password ? `:${encodeURIComponent(options.password)}@` : '';
  return {
    url: `redis://${auth}127.0.0.1:${port}`,
    port,
    pid: () => child?.pid,
    kill,
    restart: launch,
    stop: async () => {
      await kill('SIGTERM');
      if (ownDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
