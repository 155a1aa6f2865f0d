import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { findExecutable } from './findExecutable.js';
import { waitUntil } from './processes.js';
import { REDIS_INSTALL_HINT, startRedisServer, ToolMissingError, type LocalRedis } from './redisServer.js';

const run = promisify(execFile);

export interface LocalRedisCluster {
  /** Every primary, in the order their slots were given. */
  nodes: LocalRedis[];
  /** `127.0.0.1:<port>,…`, as REDIS_CLUSTER_NODES takes it. */
  seeds: string;
  /** A URL of the first node, for REDIS_URL (its scheme and credentials; the host is one seed among others). */
  url: string;
  stop(): Promise<void>;
}

/**
 * Runs a Redis Cluster of `primaries` (3 by default, the least `redis-cli --cluster create` accepts) replica-less
 * `redis-server --cluster-enabled yes` processes on free loopback ports, slots spread evenly, and resolves once
 * every node reports the cluster's state ok. Nothing is persisted.
 */
export async function startRedisCluster(options: { primaries?: number } = {}): Promise<LocalRedisCluster> {
  const cli = process.env.REDIS_CLI_BIN ?? findExecutable('redis-cli');
  if (!cli) throw new ToolMissingError('redis-cli', REDIS_INSTALL_HINT);
  const dirs: string[] = [];
  const nodes: LocalRedis[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((node) => node.stop()));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let index = 0; index < (options.primaries ?? 3); index++) {
      // Each node keeps its own nodes.conf, so each has a folder of its own.
      const dir = mkdtempSync(join(tmpdir(), 'gateway-redis-cluster-'));
      dirs.push(dir);
      nodes.push(
        await startRedisServer({
          dir,
          args: ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '2000'],
        }),
      );
    }
    const addresses = nodes.map((node) => `127.0.0.1:${node.port}`);
    await run(cli, ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes']);
    await waitUntil(
      async () => {
        const states = await Promise.all(
          nodes.map(async (node) => (await run(cli, ['-p', String(node.port), 'cluster', 'info'])).stdout),
        );
        return states.every((info) => info.includes('cluster_state:ok'));
      },
      20_000,
      'every cluster node to report cluster_state:ok',
    );
    return { nodes, seeds: addresses.join(','), url: (nodes[0] as LocalRedis).url, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * How the keys a test found on a cluster spread over `keyspaces` (key prefixes such as `{account}:`): the keys under
 * none of them, and how many hash slots each keyspace's keys occupy (a keyspace whose multi-key scripts run on a
 * cluster must occupy one).
 */
export async function slotsOfKeyspaces(
  keys: readonly string[],
  keyspaces: readonly string[],
  keyslot: (key: string) => Promise<unknown>,
): Promise<{ strays: string[]; slots: Record<string, number> }> {
  const strays = keys.filter((key) => !keyspaces.some((keyspace) => key.startsWith(keyspace)));
  const slots: Record<string, number> = {};
  for (const keyspace of keyspaces) {
    const inIt = keys.filter((key) => key.startsWith(keyspace));
    slots[keyspace] = new Set(await Promise.all(inIt.map(keyslot))).size;
  }
  return { strays, slots };
}
