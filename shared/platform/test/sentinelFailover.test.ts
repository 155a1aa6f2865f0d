import { Redis } from 'ioredis';
import { startRedisSentinelGroup, waitUntil, type LocalRedisSentinelGroup } from '@frequency-gateway/devstack';
import { openRedis, type RedisClient, type RedisEndpoint, type RedisMode } from '../src/index.js';

// Every connection a component opens through Sentinel must follow a failover by itself, whatever it was doing
// when the primary went: waiting to reconnect, asking a Sentinel for the primary, or connected. A component
// holds a dozen of them (its own, BullMQ's producers and consumers, the intake relay's reader); 48 connections
// under steady writes make the moments that matter (a connection asking a Sentinel just as the Sentinels
// announce the new primary) happen in every run, where a component's dozen met them in one run of five.
const CONNECTIONS = 48;
const MODES: RedisMode[] = ['queued', 'failFast', 'blocking'];

let group: LocalRedisSentinelGroup;
let connections: RedisClient[] = [];

beforeEach(async () => {
  group = await startRedisSentinelGroup();
});
afterEach(async () => {
  for (const connection of connections) connection.disconnect();
  connections = [];
  await group?.stop();
});

function openAll(): RedisClient[] {
  const endpoint: RedisEndpoint = {
    kind: 'sentinel',
    url: 'redis://127.0.0.1:6379',
    sentinels: group.sentinelNodes.split(',').map((node) => ({ host: '127.0.0.1', port: Number(node.split(':')[1]) })),
    name: group.name,
  };
  connections = Array.from({ length: CONNECTIONS }, (_, index) => openRedis(endpoint, MODES[index % MODES.length]));
  return connections;
}

/** Writes on every connection every 20 ms until stopped, as a busy component does; failures are expected meanwhile. */
function keepWriting(all: RedisClient[]): () => void {
  const timer = setInterval(() => {
    for (const [index, connection] of all.entries())
      connection.set(`written:${index}`, String(Date.now())).catch(() => undefined);
  }, 20);
  return () => clearInterval(timer);
}

/** The connections by status (`ready`, `reconnecting`, `end`, …). */
function statuses(all: RedisClient[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const connection of all) counts[connection.status] = (counts[connection.status] ?? 0) + 1;
  return counts;
}

/** Waits until the Sentinels name another primary than `before`; its port. */
async function newPrimary(before: number): Promise<number> {
  return waitUntil(
    async () => {
      const port = await group.primaryPort().catch(() => before);
      return port !== before && port;
    },
    60_000,
    'the Sentinels to name a new primary',
  );
}

/** Every connection ready again and writing on the new primary (a write the new primary itself then holds). */
async function expectAllOn(all: RedisClient[], port: number): Promise<void> {
  await waitUntil(
    async () => all.every((connection) => connection.status === 'ready'),
    60_000,
    () => `every connection ready again: ${JSON.stringify(statuses(all))}`,
  );
  // A fail-fast command may still meet the switch (its caller answers 503); the next one must succeed.
  await Promise.all(
    all.map((connection, index) =>
      waitUntil(
        async () => (await connection.set(`after:${index}`, 'yes').catch(() => 'refused')) === 'OK',
        30_000,
        `connection ${index} writing`,
      ),
    ),
  );
  const primary = group.servers.find((server) => server.port === port)!;
  const direct = new Redis(primary.url);
  try {
    expect(await direct.exists(...all.map((_, index) => `after:${index}`))).toBe(all.length);
    // Each connection is one of the new primary's clients.
    const clients = String(await direct.client('LIST'))
      .split('\n')
      .filter(Boolean);
    expect(clients.length).toBeGreaterThanOrEqual(all.length);
  } finally {
    direct.disconnect();
  }
}

/** Opens every connection, waits until all are ready, and keeps writing on them; says where the primary was. */
async function openAllUnderWrites(): Promise<{ all: RedisClient[]; stop: () => void; before: number }> {
  const all = openAll();
  await waitUntil(
    async () => all.every((connection) => connection.status === 'ready'),
    30_000,
    'every connection ready',
  );
  const stop = keepWriting(all);
  return { all, stop, before: await group.primaryPort() };
}

test('kill -9 of the primary: every connection (queued, fail-fast, blocking) reconnects to the new primary, none gives up', async () => {
  const { all, stop, before } = await openAllUnderWrites();
  await group.servers[0]!.kill('SIGKILL');
  const after = await newPrimary(before);
  try {
    await expectAllOn(all, after);
  } finally {
    stop();
  }
}, 120_000);

test('a failover with the old primary alive (SENTINEL FAILOVER): every connection moves to the new primary', async () => {
  const { all, stop, before } = await openAllUnderWrites();
  const sentinel = new Redis({ host: '127.0.0.1', port: group.sentinels[0]!.port });
  try {
    await sentinel.call('SENTINEL', 'FAILOVER', group.name);
  } finally {
    sentinel.disconnect();
  }
  const after = await newPrimary(before);
  try {
    // Until the Sentinels demote it, the old primary still takes writes (what any Sentinel failover allows);
    // once it is a replica, every connection must have left it for the new primary.
    const old = new Redis(group.servers[0]!.url);
    try {
      await waitUntil(
        async () => /role:slave/.test(await old.info('replication')),
        30_000,
        'the old primary a replica',
      );
    } finally {
      old.disconnect();
    }
    await expectAllOn(all, after);
  } finally {
    stop();
  }
}, 120_000);
