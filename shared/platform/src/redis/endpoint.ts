import { z } from 'zod';
import { ConfigError } from '../config/load.js';

/** One Redis or Sentinel node, as `host:port` (an IPv6 host in brackets: `[::1]:26379`). */
export interface RedisNode {
  host: string;
  port: number;
}

/**
 * Where a component's Redis is. `url` always gives the scheme (`rediss:` for TLS), the credentials and, outside
 * a cluster, the database; its host and port are the server only when neither Sentinel nor a cluster is named.
 * - `single`: one server at `url`.
 * - `sentinel`: the primary of the group `name` that the Sentinels elect, asked again after every failover.
 * - `cluster`: a Redis Cluster found from any of `nodes`.
 */
export type RedisEndpoint =
  | { kind: 'single'; url: string }
  | { kind: 'sentinel'; url: string; sentinels: RedisNode[]; name: string; sentinelPassword?: string }
  | { kind: 'cluster'; url: string; nodes: RedisNode[] };

const NODE = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/;

/** A comma-separated list of `host:port`, as REDIS_SENTINELS and REDIS_CLUSTER_NODES take it. */
export const redisNodes = () =>
  z.string().transform((text, context): RedisNode[] => {
    const nodes: RedisNode[] = [];
    for (const entry of text.split(',').map((part) => part.trim())) {
      const match = NODE.exec(entry);
      const port = Number(match?.[3]);
      if (!match || port < 1 || port > 65535) {
        context.addIssue({ code: 'custom', message: `"${entry}" is not host:port` });
        return z.NEVER;
      }
      nodes.push({ host: (match[1] ?? match[2]) as string, port });
    }
    return nodes;
  });

/** The configuration a component's Redis endpoint is read from (see commonVariables). */
export interface RedisSettings {
  REDIS_URL: string;
  REDIS_SENTINELS?: RedisNode[] | undefined;
  REDIS_SENTINEL_NAME: string;
  REDIS_SENTINEL_PASSWORD?: string | undefined;
  REDIS_CLUSTER_NODES?: RedisNode[] | undefined;
}

/** The endpoint the settings name; a ConfigError when they name both Sentinels and a cluster. */
export function redisEndpoint(settings: RedisSettings): RedisEndpoint {
  const { REDIS_URL: url, REDIS_SENTINELS: sentinels, REDIS_CLUSTER_NODES: nodes } = settings;
  if (sentinels && nodes)
    throw new ConfigError([
      'REDIS_SENTINELS, REDIS_CLUSTER_NODES: name either the Sentinels of a replicated Redis or the nodes of a Redis Cluster, not both',
    ]);
  if (nodes) return { kind: 'cluster', url, nodes };
  if (sentinels)
    return {
      kind: 'sentinel',
      url,
      sentinels,
      name: settings.REDIS_SENTINEL_NAME,
      ...(settings.REDIS_SENTINEL_PASSWORD === undefined ? {} : { sentinelPassword: settings.REDIS_SENTINEL_PASSWORD }),
    };
  return { kind: 'single', url };
}

const shownNode = ({ host, port }: RedisNode) => `${host.includes(':') ? `[${host}]` : host}:${port}`;

/** The endpoint with any credentials left out: safe for health output. */
export function redisTarget(endpoint: RedisEndpoint | string): string {
  const url = new URL(typeof endpoint === 'string' ? endpoint : endpoint.url);
  if (typeof endpoint !== 'string' && endpoint.kind === 'sentinel')
    return `sentinel ${endpoint.name} at ${endpoint.sentinels.map(shownNode).join(',')}`;
  if (typeof endpoint !== 'string' && endpoint.kind === 'cluster')
    return `cluster at ${endpoint.nodes.map(shownNode).join(',')}`;
  const port = url.port ? `:${url.port}` : '';
  const db = url.pathname === '/' ? '' : url.pathname;
  return `${url.protocol}//${url.hostname}${port}${db}`;
}
