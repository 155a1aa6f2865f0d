// The image's `gateway account migrate`, as the process it is: it reads the service's Redis settings, brings the
// keyspace to the layout the components read, and exits 0; on a keyspace of a newer layout it exits 1 saying so.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startRedisServer, type LocalRedis } from '@frequency-gateway/devstack';
import { layoutKey } from '@frequency-gateway/platform';
import { Redis } from 'ioredis';

const run = promisify(execFile);
const repositoryRoot = fileURLToPath(new URL('../../../', import.meta.url));
let server: LocalRedis;
let redis: Redis;
beforeAll(async () => {
  server = await startRedisServer();
  redis = new Redis(server.url);
});
afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
});

const migrate = () =>
  run(process.execPath, ['--conditions=source', '--import', 'tsx', 'bin/gateway.js', 'account', 'migrate'], {
    cwd: repositoryRoot,
    env: { ...process.env, REDIS_URL: server.url, CACHE_KEY_PREFIX: 'account:' },
  });

test('gateway account migrate stamps a new keyspace, and refuses one of a newer layout', async () => {
  const { stdout } = await migrate();
  expect(stdout).toBe('{account}: layout 1, nothing to migrate\n');
  expect(await redis.get(layoutKey('{account}'))).toBe('1');

  await redis.set(layoutKey('{account}'), '2');
  const refused = await migrate().then(
    () => undefined,
    (error: { code: number; stderr: string }) => error,
  );
  expect(refused?.code).toBe(1);
  expect(refused?.stderr).toMatch(
    /^account migrate: the keyspace \{account\} has key layout 2, written by a newer gateway/,
  );
}, 60_000);
