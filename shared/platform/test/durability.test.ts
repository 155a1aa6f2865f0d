import { startRedisServer, waitUntil, type LocalRedis } from '@frequency-gateway/devstack';
import { Redis } from 'ioredis';
import { z } from 'zod';
import {
  apiVariables,
  commonVariables,
  createLogger,
  defineRoute,
  Intake,
  intakeDurability,
  intakeStream,
  intakeVariables,
  JobQueues,
  Registry,
  RequestStatusStore,
  type ComponentDefinition,
  type Job,
} from '../src/index.js';
import { startTestComponent } from './support/testComponent.js';

const config = {
  ...commonVariables({ cacheKeyPrefix: 'durable' }),
  ...apiVariables({ port: 0 }),
  ...intakeVariables(),
};

/** An api that accepts notes through an Intake, as the services accept their requests. */
const notesApi: ComponentDefinition<typeof config> = {
  name: 'notes-api',
  title: 'Notes',
  description: 'Accepts notes through an Intake',
  version: '1.0.0',
  config,
  portVariable: 'API_PORT',
  setup: ({ config, redis, logger, metrics }) => {
    const status = new RequestStatusStore(redis, {
      prefix: config.CACHE_KEY_PREFIX,
      ttlSeconds: 60,
      finalStates: ['done'],
    });
    const intake = new Intake(status, logger, metrics, {
      service: 'notes',
      stream: intakeStream(config.CACHE_KEY_PREFIX, 'notes'),
      ...intakeDurability(config),
    });
    return {
      routes: [
        defineRoute({
          method: 'post',
          path: '/v1/notes',
          operationId: 'postNote',
          summary: 'Accept a note',
          body: z.object({ text: z.string() }),
          responses: { 202: { description: 'Accepted', schema: z.object({ referenceId: z.string() }) } },
          handler: async ({ body }) => {
            const { referenceId } = await intake.accept({
              kind: 'note',
              identity: body,
              queue: 'notes',
              jobName: 'note',
              job: () => body,
            });
            return { status: 202, body: { referenceId } };
          },
        }),
      ],
    };
  },
};

/** The log lines of `component` that name `errorReference`, once there is one. */
function loggedWith(component: { logs: string[] }, errorReference: unknown): Promise<string[]> {
  return waitUntil(async () => {
    const lines = component.logs.filter((line) => line.includes(String(errorReference)));
    return lines.length > 0 && lines;
  }, 5000);
}

/** Posts a note to the notes api at `url`: the status and the body. */
async function postNote(url: string, text: string) {
  const response = await fetch(`${url}/v1/notes`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('REDIS_DURABILITY: acknowledged = on a replica too', () => {
  let primary: LocalRedis;
  let replica: LocalRedis;
  let admin: Redis;
  /** Replicas in sync with the primary (a new one is connected a few seconds before its first sync is done). */
  const replicas = async () => (await admin.info('replication')).match(/^slave\d+:.*state=online/gm)?.length ?? 0;

  beforeAll(async () => {
    primary = await startRedisServer();
    replica = await startRedisServer({ args: ['--replicaof', '127.0.0.1', String(primary.port)] });
    admin = new Redis(primary.url);
    await waitUntil(async () => (await replicas()) === 1, 20_000, 'the replica in sync');
    // Online is not yet answering: a replica still loading what it was sent confirms nothing.
    await waitUntil(async () => (await admin.wait(1, 1000)) === 1, 20_000, 'the replica confirming writes');
  });
  afterAll(async () => {
    admin?.disconnect();
    await replica?.stop();
    await primary?.stop();
  });

  const post = postNote;

  it('answers 202 once a replica has the request; 503 (logged with its errorReference) when none answers in time; 202 without the option', async () => {
    const env = { REDIS_URL: primary.url, REDIS_DURABILITY: 'replicated', REDIS_DURABILITY_TIMEOUT_MS: '1000' };
    const durable = await startTestComponent(notesApi, env);
    const plain = await startTestComponent(notesApi, { ...env, REDIS_DURABILITY: 'acknowledged' });
    try {
      for (const api of [durable, plain])
        await waitUntil(async () => api.runtime.readiness.isReady(), 10_000, 'the api ready');
      const kept = await post(durable.url, 'replicated');
      expect(kept.status).toBe(202);
      // The replica has the record the 202 stood for.
      const onReplica = new Redis(replica.url);
      const record = `{durable}:request:${kept.body.referenceId as string}`;
      expect(await onReplica.exists(record)).toBe(1);
      onReplica.disconnect();

      await replica.kill('SIGKILL');
      await waitUntil(async () => (await replicas()) === 0, 10_000, 'the primary to lose its replica');
      const refused = await post(durable.url, 'no replica');
      expect(refused.status).toBe(503);
      expect(refused.body.message).toBe('The request could not be queued');
      // The access line holds the reference and the cause, logged once the answer is sent.
      const logged = await loggedWith(durable, refused.body.errorReference);
      expect(JSON.parse(logged[0] as string)).toMatchObject({ level: 'error', status: 503, route: '/v1/notes' });
      expect(logged[0]).toContain('reached 0 of the 1 Redis replicas it needs within 1000 ms');
      // The primary has it: the same request again, once a replica is back, is the same one.
      expect(await admin.exists(`{durable}:request:${String(kept.body.referenceId)}`)).toBe(1);

      expect((await post(plain.url, 'no replica, no wait')).status).toBe(202);

      await replica.restart();
      await waitUntil(async () => (await replicas()) === 1, 20_000, 'the replica in sync again');
      const again = await post(durable.url, 'no replica');
      expect(again.status).toBe(202);
    } finally {
      await durable.stop();
      await plain.stop();
    }
  }, 60_000);

  it('answers 503 when its connection was lost while it waited for the replica: WAIT on the new one proves nothing', async () => {
    const durable = await startTestComponent(notesApi, {
      REDIS_URL: primary.url,
      REDIS_DURABILITY: 'replicated',
      REDIS_DURABILITY_TIMEOUT_MS: '10000',
    });
    const replicaPid = replica.pid()!;
    try {
      await waitUntil(async () => durable.runtime.readiness.isReady(), 10_000, 'the api ready');
      await waitUntil(async () => (await admin.wait(1, 1000)) === 1, 20_000, 'the replica confirming writes');
      // The replica stops answering: the api's WAIT blocks. Its connection is then cut, as a primary's death cuts
      // it, and the replica answers again, so a WAIT sent again on the new connection is answered at once.
      process.kill(replicaPid, 'SIGSTOP');
      const answer = post(durable.url, 'the connection lost under WAIT');
      await waitUntil(
        async () => Number(/^blocked_clients:(\d+)/m.exec(await admin.info('clients'))?.[1]) > 0,
        10_000,
        "the api's WAIT blocked",
      );
      await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
      process.kill(replicaPid, 'SIGCONT');
      const refused = await answer;
      expect(refused.status).toBe(503);
      const logged = await loggedWith(durable, refused.body.errorReference);
      expect(logged[0]).toContain('a Redis connection was lost while the writes were made');
      // Posted again, the same request is accepted, now confirmed.
      expect((await post(durable.url, 'the connection lost under WAIT')).status).toBe(202);
    } finally {
      process.kill(replicaPid, 'SIGCONT');
      await durable.stop();
    }
  }, 60_000);
});

describe('REDIS_DURABILITY: acknowledged = on every replica in sync', () => {
  let primary: LocalRedis;
  const replicas: LocalRedis[] = [];
  let admin: Redis;
  const inSync = async () => (await admin.info('replication')).match(/^slave\d+:.*state=online/gm)?.length ?? 0;

  beforeAll(async () => {
    primary = await startRedisServer();
    for (let n = 0; n < 2; n++)
      replicas.push(await startRedisServer({ args: ['--replicaof', '127.0.0.1', String(primary.port)] }));
    admin = new Redis(primary.url);
    await waitUntil(async () => (await inSync()) === 2, 20_000, 'both replicas in sync');
    await waitUntil(async () => (await admin.wait(2, 1000)) === 2, 20_000, 'both replicas confirming writes');
  });
  afterAll(async () => {
    admin?.disconnect();
    for (const replica of replicas) await replica.stop();
    await primary?.stop();
  });

  it('answers 202 only once both replicas have the request (the Sentinels may promote either): 503 while one is frozen', async () => {
    const api = await startTestComponent(notesApi, {
      REDIS_URL: primary.url,
      REDIS_DURABILITY: 'replicated',
      REDIS_DURABILITY_TIMEOUT_MS: '1000',
    });
    const frozen = replicas[1]!;
    try {
      await waitUntil(async () => api.runtime.readiness.isReady(), 10_000, 'the api ready');
      expect((await postNote(api.url, 'on both')).status).toBe(202);

      // Frozen, the replica is still in sync for the primary (until its replication timeout), and confirms nothing.
      process.kill(frozen.pid()!, 'SIGSTOP');
      const refused = await postNote(api.url, 'on one only');
      expect(refused.status).toBe(503);
      const logged = await loggedWith(api, refused.body.errorReference);
      expect(logged[0]).toContain('reached 1 of the 2 Redis replicas it needs within 1000 ms');

      process.kill(frozen.pid()!, 'SIGCONT');
      await waitUntil(async () => (await postNote(api.url, 'on both again')).status === 202, 20_000, 'a 202 again');
    } finally {
      process.kill(frozen.pid()!, 'SIGCONT');
      await api.stop();
    }
  });
});

describe('REDIS_DURABILITY in a worker: a job completes once a replica has what it wrote', () => {
  let primary: LocalRedis;
  let replica: LocalRedis;
  let admin: Redis;
  let onReplica: Redis;
  let writer: Redis;
  let queues: JobQueues;
  const replicas = async () => (await admin.info('replication')).match(/^slave\d+:.*state=online/gm)?.length ?? 0;
  const logger = createLogger({ component: 'durable-worker', level: 'silent', pretty: false });

  beforeAll(async () => {
    primary = await startRedisServer();
    replica = await startRedisServer({ args: ['--replicaof', '127.0.0.1', String(primary.port)] });
    admin = new Redis(primary.url);
    onReplica = new Redis(replica.url);
    writer = new Redis(primary.url, { enableAutoPipelining: true });
    await waitUntil(async () => (await replicas()) === 1, 20_000, 'the replica in sync');
    // Online is not yet answering: a replica still loading what it was sent confirms nothing.
    await waitUntil(async () => (await admin.wait(1, 1000)) === 1, 20_000, 'the replica confirming writes');
    queues = new JobQueues({
      redis: primary.url,
      keyPrefix: '{jobs}',
      logger,
      metrics: new Registry(),
      durability: { durability: { replicas: 1, timeoutMs: 1000 }, writtenOn: [writer] },
    });
  });
  afterAll(async () => {
    await queues?.close(1000);
    for (const connection of [admin, onReplica, writer]) connection?.disconnect();
    await replica?.stop();
    await primary?.stop();
  });

  /** Runs jobs that each write their key on `writer`, `before` each write; resolves with the finished jobs' ids. */
  function worker(name: string, before: (job: Job<{ key: string }>) => Promise<void> = async () => undefined) {
    const completed: { id: string; attempts: number; onReplica: boolean }[] = [];
    const failures: string[] = [];
    const reasons: string[] = [];
    const running = queues.worker<{ key: string }, void>(name, async (job) => {
      await before(job);
      await writer.set(job.data.key, String(job.attemptsMade));
    });
    running.on('completed', (job) => {
      // Checked the moment the job completes: its write is on the replica already.
      void onReplica
        .exists(job.data.key)
        .then((exists) => completed.push({ id: job.id!, attempts: job.attemptsMade, onReplica: exists === 1 }));
    });
    running.on('failed', (_job, error) => {
      failures.push(error.name);
      reasons.push(`${error.name}: ${error.message}`);
    });
    return { completed, failures, reasons };
  }
  /** A job that writes `{jobs}:<id>`. */
  const add = (name: string, id: string) =>
    queues
      .queue<{ key: string }>(name)
      .add('write', { key: `{jobs}:${id}` }, { jobId: id, attempts: 100, backoff: { type: 'fixed', delay: 200 } });

  it('completes a job whose writes a replica has, each one the first time', async () => {
    const { completed, reasons } = worker('plain');
    for (let index = 0; index < 20; index++) await add('plain', `plain-${index}`);
    await waitUntil(async () => completed.length === 20, 20_000, 'every job completed');
    expect(reasons).toEqual([]);
    expect(completed.filter((job) => !job.onReplica || job.attempts !== 1)).toEqual([]);
  });

  it('tries a job again while no replica confirms its writes, and completes it once one does', async () => {
    await onReplica.replicaof('NO', 'ONE');
    await waitUntil(async () => (await replicas()) === 0, 10_000, 'the primary without its replica');
    const { completed, failures } = worker('alone');
    await add('alone', 'alone');
    await waitUntil(async () => failures.length >= 2, 20_000, 'attempts refused for want of a replica');
    expect(completed).toEqual([]);
    expect(new Set(failures)).toEqual(new Set(['NotReplicatedError']));

    await onReplica.replicaof('127.0.0.1', String(primary.port));
    await waitUntil(async () => completed.length === 1, 20_000, 'the job completed with its replica back');
    expect(completed[0]).toMatchObject({ id: 'alone', onReplica: true });
  });

  it('tries a job again when a connection it wrote on was lost meanwhile (its writes may be gone with a primary)', async () => {
    let killed = false;
    const { completed, failures } = worker('lost', async () => {
      if (killed) return;
      killed = true;
      // The connection the job writes on drops under it (as when its primary dies) and comes back.
      const id = await writer.client('ID');
      await admin.client('KILL', 'ID', String(id));
    });
    await add('lost', 'lost');
    await waitUntil(async () => completed.length === 1, 20_000, 'the job completed on its second attempt');
    expect(failures).toEqual(['WritesMayBeLostError']);
    expect(completed[0]).toMatchObject({ attempts: 2, onReplica: true });
  });
});
