// A service's keyspace carries the version of its key layout: a component refuses to start on another layout,
// naming what to do; `migrate` brings an older one to the current layout step by step, on a real Redis.
import { callJson, startRedisServer, waitUntil, type LocalRedis } from '@frequency-gateway/devstack';
import { Redis } from 'ioredis';
import {
  KeyspaceLayoutError,
  layoutKey,
  migrateKeyspace,
  migrateLayout,
  type KeyspaceLayout,
  type LayoutMigration,
} from '../src/index.js';
import { startTestComponent, testComponent } from './support/testComponent.js';

let server: LocalRedis;
let redis: Redis;
beforeAll(async () => {
  server = await startRedisServer();
  redis = new Redis(server.url);
});
beforeEach(async () => redis.flushall());
afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
});

const KEYSPACE = '{test}';

/** Layout 3: version 2 renames the notes list, version 3 adds a count beside it. */
function layoutThree(ran: number[], failAt?: number): KeyspaceLayout {
  const step = (to: number, description: string, run: LayoutMigration['run']): LayoutMigration => ({
    to,
    description,
    run: async (connection, keyspace) => {
      ran.push(to);
      if (to === failAt) throw new Error(`step ${to} cut short`);
      await run(connection, keyspace);
    },
  });
  return {
    version: 3,
    migrations: [
      step(3, 'count the notes', async (connection, keyspace) => {
        await connection.set(`${keyspace}:notes:count`, String(await connection.llen(`${keyspace}:notes`)));
      }),
      step(2, 'rename the notes list', async (connection, keyspace) => {
        if (await connection.exists(`${keyspace}:old-notes`))
          await connection.rename(`${keyspace}:old-notes`, `${keyspace}:notes`);
      }),
    ],
  };
}

describe('migrateLayout', () => {
  it('brings a keyspace written before layouts carried a version through each step in order, and again does nothing', async () => {
    await redis.rpush(`${KEYSPACE}:old-notes`, 'a', 'b');
    const ran: number[] = [];
    expect(await migrateLayout(redis, KEYSPACE, layoutThree(ran))).toEqual({ from: 1, to: 3 });
    expect(ran).toEqual([2, 3]);
    expect(await redis.lrange(`${KEYSPACE}:notes`, 0, -1)).toEqual(['a', 'b']);
    expect(await redis.get(`${KEYSPACE}:notes:count`)).toBe('2');
    expect(await redis.get(layoutKey(KEYSPACE))).toBe('3');
    expect(await migrateLayout(redis, KEYSPACE, layoutThree(ran))).toEqual({ from: 3, to: 3 });
    expect(ran).toEqual([2, 3]);
  });

  it('keeps the version of the last step done when a step fails, and goes on from it when run again', async () => {
    await redis.rpush(`${KEYSPACE}:old-notes`, 'a');
    const ran: number[] = [];
    await expect(migrateLayout(redis, KEYSPACE, layoutThree(ran, 3))).rejects.toThrow('step 3 cut short');
    expect(await redis.get(layoutKey(KEYSPACE))).toBe('2');
    expect(await migrateLayout(redis, KEYSPACE, layoutThree(ran))).toEqual({ from: 2, to: 3 });
    expect(ran).toEqual([2, 3, 3]);
  });

  it('stamps a keyspace with no key at all with the current layout, as a new deployment', async () => {
    expect(await migrateLayout(redis, KEYSPACE, layoutThree([]))).toEqual({ from: 3, to: 3 });
  });

  it('refuses a newer layout, and migrations that skip a version', async () => {
    await redis.set(layoutKey(KEYSPACE), '4');
    await expect(migrateLayout(redis, KEYSPACE, layoutThree([]))).rejects.toThrow(KeyspaceLayoutError);
    await redis.set(layoutKey(KEYSPACE), '1');
    const gap: KeyspaceLayout = { version: 3, migrations: [layoutThree([]).migrations[0]!] };
    await expect(migrateLayout(redis, KEYSPACE, gap)).rejects.toThrow('no migration of {test} from layout 1 to 2');
  });
});

describe('a component and the layout of its keyspace', () => {
  const withLayout = (version: number) => ({ ...testComponent, layout: { version, migrations: [] } });

  it('refuses to start on an older layout, naming the migrate command, and on a newer one', async () => {
    await redis.set(layoutKey(KEYSPACE), '1');
    await expect(startTestComponent(withLayout(2), { REDIS_URL: server.url })).rejects.toThrow(
      /has key layout 1, and this gateway reads layout 2: run its `migrate` command/,
    );
    await redis.set(layoutKey(KEYSPACE), '3');
    await expect(startTestComponent(withLayout(2), { REDIS_URL: server.url })).rejects.toThrow(
      /has key layout 3, written by a newer gateway/,
    );
  });

  it('stamps a new keyspace, and turns unready naming the layout when the keyspace changes under it', async () => {
    const component = await startTestComponent(withLayout(2), { REDIS_URL: server.url });
    try {
      expect(await redis.get(layoutKey(KEYSPACE))).toBe('2');
      await waitUntil(async () => (await callJson(component.url, 'GET', '/readyz')).status === 200, 10_000, 'ready');
      await redis.set(layoutKey(KEYSPACE), '3');
      await waitUntil(
        async () => {
          const answer = await callJson(component.url, 'GET', '/readyz');
          return answer.status === 503 && JSON.stringify(answer.body).includes('written by a newer gateway');
        },
        10_000,
        'unready, naming the newer layout',
      );
    } finally {
      await component.stop();
    }
  });

  it('is migrated by migrateKeyspace, the service command, with the component’s own Redis settings', async () => {
    await redis.rpush(`${KEYSPACE}:old-notes`, 'a');
    const printed: string[] = [];
    await migrateKeyspace({ ...testComponent, layout: layoutThree([]) }, { REDIS_URL: server.url }, (line) =>
      printed.push(line),
    );
    expect(printed).toEqual([
      '{test}: layout 1 -> 2: rename the notes list',
      '{test}: layout 2 -> 3: count the notes',
      '{test}: layout 1 -> 3: done',
    ]);
    const component = await startTestComponent(
      { ...testComponent, layout: layoutThree([]) },
      { REDIS_URL: server.url },
    );
    await component.stop();
  });
});
