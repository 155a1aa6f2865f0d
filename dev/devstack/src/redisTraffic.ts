import { Redis } from 'ioredis';

/** What a Redis server has served since it started: commands run, and bytes received and sent. */
export interface RedisTraffic {
  commands: number;
  /** Commands by name (`evalsha`, `hset`, …): where they go. */
  byCommand: Record<string, number>;
  bytesIn: number;
  bytesOut: number;
}

/** One INFO section's `name:value` lines, by name (a value may itself be `k=v,…`). */
function infoFields(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0 && !line.startsWith('#')) fields.set(line.slice(0, colon), line.slice(colon + 1));
  }
  return fields;
}

/** The server's traffic so far (INFO commandstats and stats); the INFO calls themselves count a little. */
export async function redisTraffic(url: string): Promise<RedisTraffic> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await client.connect();
    const commandStats = infoFields(await client.info('commandstats'));
    const stats = infoFields(await client.info('stats'));
    const byCommand: Record<string, number> = {};
    for (const [field, value] of commandStats)
      byCommand[field.replace(/^cmdstat_/, '')] = Number(/(?:^|,)calls=(\d+)/.exec(value)?.[1] ?? 0);
    return {
      commands: Object.values(byCommand).reduce((total, calls) => total + calls, 0),
      byCommand,
      bytesIn: Number(stats.get('total_net_input_bytes') ?? 0),
      bytesOut: Number(stats.get('total_net_output_bytes') ?? 0),
    };
  } finally {
    client.disconnect();
  }
}

/** The traffic between two readings, per unit of work (a request, a broadcast). */
export function trafficPer(before: RedisTraffic, after: RedisTraffic, units: number): RedisTraffic {
  const per = (value: number) => value / Math.max(1, units);
  const byCommand: Record<string, number> = {};
  for (const [name, calls] of Object.entries(after.byCommand))
    if (calls !== (before.byCommand[name] ?? 0)) byCommand[name] = per(calls - (before.byCommand[name] ?? 0));
  return {
    commands: per(after.commands - before.commands),
    byCommand,
    bytesIn: per(after.bytesIn - before.bytesIn),
    bytesOut: per(after.bytesOut - before.bytesOut),
  };
}

/** The most frequent commands of a traffic reading, as `evalsha 12.0, hset 8.5, …`. */
export function topCommands(traffic: RedisTraffic, count = 8): string {
  return Object.entries(traffic.byCommand)
    .sort(([, a], [, b]) => b - a)
    .slice(0, count)
    .map(([name, calls]) => `${name} ${calls.toFixed(1)}`)
    .join(', ');
}
