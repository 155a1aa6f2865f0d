import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { findExecutable } from './findExecutable.js';
import { freePort } from './freePort.js';
import { waitUntil } from './processes.js';
import { REDIS_INSTALL_HINT, startRedisServer, ToolMissingError, type LocalRedis } from './redisServer.js';

const run = promisify(execFile);

export interface LocalSentinel {
  port: number;
  stop(): Promise<void>;
}

export interface LocalRedisSentinelGroup {
  /** The name the Sentinels monitor the primary under (REDIS_SENTINEL_NAME). */
  name: string;
  /** The primary at the start, then its replicas; which one is the primary now, `primaryPort()` says. */
  servers: LocalRedis[];
  sentinels: LocalSentinel[];
  /** `127.0.0.1:<port>,…` of the Sentinels, as REDIS_SENTINELS takes it. */
  sentinelNodes: string;
  /** The primary's port as the Sentinels name it now. */
  primaryPort(): Promise<number>;
  stop(): Promise<void>;
}

/** `redis-cli -p port …`'s answer. */
async function cli(binary: string, port: number, ...args: string[]): Promise<string> {
  return (await run(binary, ['-p', String(port), ...args])).stdout.trim();
}

function startSentinel(binary: string, dir: string, port: number, lines: string[]): Promise<LocalSentinel> {
  const file = join(dir, `sentinel-${port}.conf`);
  // Sentinel rewrites its file as it learns (replicas, other Sentinels, failovers): each has its own.
  writeFileSync(file, [`port ${port}`, 'bind 127.0.0.1', `dir ${dir}`, ...lines, ''].join('\n'));
  const child: ChildProcess = spawn(binary, [file, '--sentinel'], { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (!output.includes('+monitor')) return;
      child.stdout?.off('data', onData);
      child.stdout?.resume();
      child.stderr?.resume();
      resolve({
        port,
        stop: async () => {
          if (child.exitCode !== null || child.signalCode !== null) return;
          const exited = new Promise((done) => child.once('exit', done));
          child.kill('SIGTERM');
          await exited;
        },
      });
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) =>
      reject(new Error(`redis sentinel on ${port} exited with ${code}: ${output.slice(-500)}`)),
    );
    child.once('error', reject);
  });
}

/**
 * A replicated Redis watched by Sentinel, on loopback: a primary, `replicas` replicas of it and `sentinels`
 * Sentinels (quorum: a majority) that fail over after `downAfterMs` without an answer. Resolves once every
 * replica is in sync and every Sentinel knows the others, so that a failover can be authorized at once.
 */
export async function startRedisSentinelGroup(
  options: { replicas?: number; sentinels?: number; downAfterMs?: number } = {},
): Promise<LocalRedisSentinelGroup> {
  const binary = process.env.REDIS_SERVER_BIN ?? findExecutable('redis-server');
  const cliBinary = process.env.REDIS_CLI_BIN ?? findExecutable('redis-cli');
  if (!binary) throw new ToolMissingError('redis-server', REDIS_INSTALL_HINT);
  if (!cliBinary) throw new ToolMissingError('redis-cli', REDIS_INSTALL_HINT);
  const name = 'gateway';
  const dir = mkdtempSync(join(tmpdir(), 'gateway-redis-sentinel-'));
  const servers: LocalRedis[] = [];
  const sentinels: LocalSentinel[] = [];
  const stop = async () => {
    await Promise.all([...sentinels, ...servers].map((process) => process.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const primary = await startRedisServer();
    servers.push(primary);
    const replicas = options.replicas ?? 2;
    for (let index = 0; index < replicas; index++)
      servers.push(await startRedisServer({ args: ['--replicaof', '127.0.0.1', String(primary.port)] }));
    await waitUntil(
      // A connected replica is in sync only once its first full sync is done (state=online).
      async () =>
        ((await cli(cliBinary, primary.port, 'info', 'replication')).match(/^slave\d+:.*state=online/gm)?.length ??
          0) === replicas,
      30_000,
      `${replicas} replicas in sync with the primary`,
    );
    const count = options.sentinels ?? 3;
    const lines = [
      `sentinel monitor ${name} 127.0.0.1 ${primary.port} ${Math.floor(count / 2) + 1}`,
      `sentinel down-after-milliseconds ${name} ${options.downAfterMs ?? 1000}`,
      `sentinel failover-timeout ${name} 10000`,
    ];
    for (let index = 0; index < count; index++)
      sentinels.push(await startSentinel(binary, dir, await freePort(), lines));
    await waitUntil(
      async () => {
        const answers = await Promise.all(
          sentinels.map((sentinel) => cli(cliBinary, sentinel.port, 'sentinel', 'ckquorum', name)),
        );
        return answers.every((answer) => answer.startsWith(`OK ${count} usable`));
      },
      30_000,
      `every Sentinel to know the ${count} of them`,
    );
    const primaryPort = async () => {
      for (const sentinel of sentinels) {
        const answer = await cli(cliBinary, sentinel.port, 'sentinel', 'get-master-addr-by-name', name).catch(() => '');
        const port = Number(answer.split('\n')[1]);
        if (port > 0) return port;
      }
      throw new Error('no Sentinel names a primary');
    };
    return {
      name,
      servers,
      sentinels,
      sentinelNodes: sentinels.map((sentinel) => `127.0.0.1:${sentinel.port}`).join(','),
      primaryPort,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
