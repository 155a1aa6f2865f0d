import { startRedisServer, waitUntil, type LocalRedis } from '@frequency-gateway/devstack';
import { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import { Worker, UnrecoverableError } from 'bullmq';
import {
  createLogger,
  createMetricsRegistry,
  JOB_RETENTION,
  JobQueues,
  openRedis,
  type RedisClient,
  TurnBatch,
  type ItemOutcome,
  type JobsOptions,
} from '../src/index.js';
import {
  Intake,
  intakeStream,
  IntakeRelay,
  referenceIdOf,
  RequestStatusStore,
  waitingIntakeJob,
  type IntakeRequest,
} from '../src/requests/index.js';
import { captureLogLines } from './support/logLines.js';

describe('TurnBatch', () => {
  it('serves what is submitted in one turn of the event loop with one run, in order', async () => {
    const runs: number[][] = [];
    const batch = new TurnBatch<number, string>(async (items) => {
      runs.push(items);
      return items.map((item) => ({ ok: true, value: `#${item}` }));
    });
    const first = await Promise.all([1, 2, 3].map((item) => batch.submit(item)));
    const second = await batch.submit(4);
    expect(first).toEqual(['#1', '#2', '#3']);
    expect(second).toBe('#4');
    expect(runs).toEqual([[1, 2, 3], [4]]);
  });

  it('sends a batch early at its size limit, and fails one item or all as the run says', async () => {
    const runs: number[][] = [];
    const batch = new TurnBatch<number, number>(async (items) => {
      runs.push(items);
      if (items.includes(99)) throw new Error('the whole batch failed');
      return items.map((item): ItemOutcome<number> =>
        item % 2 ? { ok: true, value: item } : { ok: false, error: item },
      );
    }, 2);
    const outcomes = await Promise.allSettled([1, 2, 3].map((item) => batch.submit(item)));
    expect(runs).toEqual([[1, 2], [3]]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const failed = await Promise.allSettled([5, 99].map((item) => batch.submit(item)));
    expect(failed.map((outcome) => (outcome.status === 'rejected' ? (outcome.reason as Error).message : ''))).toEqual([
      'the whole batch failed',
      'the whole batch failed',
    ]);
  });
});

describe('Intake and IntakeRelay', () => {
  const PREFIX = 'it';
  const stream = intakeStream(PREFIX, 'test');
  let server: LocalRedis;
  let redis: Redis;
  let failFast: RedisClient;
  let status: RequestStatusStore;
  let queues: JobQueues;
  let metrics: Registry;
  let intake: Intake;
  const logs = captureLogLines();
  const logger = createLogger({ component: 'test', level: 'info', pretty: false, destination: logs.stream });
  const relays: IntakeRelay[] = [];
  const relay = (options: { consumer?: string; claimIdleMs?: number } = {}) => {
    const started = new IntakeRelay({
      redis: server.url,
      stream,
      queues,
      logger,
      metrics,
      blockMs: 200,
      ...options,
    });
    relays.push(started);
    started.start();
    return started;
  };
  const drained = () => waitUntil(async () => (await redis.xlen(stream)) === 0, 10_000, 'the stream emptied', 20);
  const request = (text: string, queue = 'work'): IntakeRequest<{ referenceId: string; text: string }> => ({
    kind: 'note',
    identity: { text },
    queue,
    jobName: 'note',
    job: (referenceId) => ({ referenceId, text }),
    details: { author: '7' },
  });
  const metric = async (name: string) =>
    (await metrics.getMetricsAsJSON()).find((item) => item.name === name)?.values ?? [];

  beforeAll(async () => {
    server = await startRedisServer();
    redis = new Redis(server.url);
    // As the api has it: requests fail at once while Redis is away.
    failFast = openRedis(server.url, 'failFast');
    await waitUntil(async () => failFast.status === 'ready', 10_000, 'the fail-fast connection ready', 20);
    status = new RequestStatusStore(failFast, { prefix: PREFIX, ttlSeconds: 60, finalStates: ['done', 'failed'] });
    metrics = createMetricsRegistry('test');
    queues = new JobQueues({ redis: server.url, keyPrefix: PREFIX, logger, metrics });
    intake = new Intake(status, logger, metrics, { service: 'test', stream });
  });
  afterEach(async () => {
    await Promise.all(relays.splice(0).map((started) => started.stop()));
  });
  afterAll(async () => {
    await queues?.close();
    redis?.disconnect();
    failFast?.disconnect();
    await server?.stop();
  });

  it('records a turn of requests in one script, and the relay queues each job once', async () => {
    await intake.accept(request('first use: Redis learns the script'));
    await redis.config('RESETSTAT');
    const texts = Array.from({ length: 40 }, (_, n) => `note ${n}`);
    const accepted = await Promise.all(texts.map((text) => intake.accept(request(text))));
    const scripts = Object.fromEntries(
      ((await redis.info('commandstats')).match(/cmdstat_(evalsha|eval):calls=(\d+)/g) ?? []).map((line) => [
        line.split(':')[0],
        Number(line.split('=')[1]),
      ]),
    );
    expect(scripts).toEqual({ cmdstat_evalsha: 1 });
    expect(accepted.map((item) => item.referenceId)).toEqual(texts.map((text) => referenceIdOf('note', { text })));
    expect(accepted.every((item) => item.fresh && item.state === 'queued')).toBe(true);
    // Nothing is queued until a relay runs; the requests wait in the stream, with their records.
    expect(await redis.xlen(stream)).toBe(41);
    expect(await status.get(accepted[0]!.referenceId)).toMatchObject({ state: 'queued', kind: 'note', author: '7' });

    relay();
    await drained();
    const work = queues.queue('work');
    expect(await work.getJobCounts('waiting')).toEqual({ waiting: 41 });
    const job = (await work.getJob(accepted[3]!.referenceId))!;
    expect(job.name).toBe('note');
    expect(job.data).toEqual({ referenceId: accepted[3]!.referenceId, text: 'note 3' });
    expect(job.opts).toMatchObject({ attempts: 5, backoff: { type: 'exponential', delay: 2000 } });
    expect(await metric('intake_relayed_total')).toEqual([
      expect.objectContaining({ labels: expect.objectContaining({ queue: 'work' }), value: 41 }),
    ]);
    expect(await metric('intake_backlog')).toEqual([expect.objectContaining({ value: 0 })]);

    // The same requests again: same ids, nothing new.
    const again = await Promise.all(texts.slice(0, 5).map((text) => intake.accept(request(text))));
    expect(again.map((item) => [item.referenceId, item.fresh])).toEqual(
      accepted.slice(0, 5).map((item) => [item.referenceId, false]),
    );
    await drained();
    expect(await work.getJobCounts('waiting')).toEqual({ waiting: 41 });
  });

  it("gives each queue's jobs that queue's options when the intake has a table of them", async () => {
    const table: Record<string, JobsOptions> = {
      slow: { attempts: 10, backoff: { type: 'exponential', delay: 1_000 }, ...JOB_RETENTION },
      quick: { attempts: 2 },
    };
    const tabled = new Intake(status, logger, createMetricsRegistry('tabled'), {
      service: 'tabled',
      stream,
      jobOptions: (queue) => table[queue] ?? {},
    });
    const [slow, quick] = await Promise.all([
      tabled.accept(request('by the slow queue', 'slow')),
      tabled.accept(request('by the quick queue', 'quick')),
    ]);
    relay();
    await drained();
    expect((await queues.queue('slow').getJob(slow!.referenceId))?.opts).toMatchObject(table.slow!);
    const quickJob = await queues.queue('quick').getJob(quick!.referenceId);
    expect(quickJob?.opts).toMatchObject({ attempts: 2 });
    expect(quickJob?.opts.backoff).toBeUndefined();
  });

  it('starts a failed request over: its failed job is replaced; a job in any other state is kept', async () => {
    const started = relay();
    const { referenceId } = await intake.accept(request('fails', 'retry'));
    await drained();
    const work = queues.queue('retry');
    // A worker takes the job and it fails for good.
    const taker = new Worker('retry', undefined, { connection: { url: server.url }, prefix: `${PREFIX}:bull` });
    const job = (await taker.getNextJob('token'))!;
    expect(job.id).toBe(referenceId);
    await job.moveToFailed(new UnrecoverableError('no delegation'), 'token', false);
    await taker.close();
    expect(await work.getJobState(referenceId)).toBe('failed');
    await status.update(referenceId, 'failed', { error: { message: 'no delegation' } });

    const again = await intake.accept(request('fails', 'retry'));
    expect(again).toEqual({ referenceId, fresh: true, state: 'queued' });
    await drained();
    expect(await work.getJobState(referenceId)).toBe('waiting');
    expect(await status.get(referenceId)).toMatchObject({ state: 'queued', version: 3 });

    // A request under way is not queued again: its record is no longer queued.
    await status.update(referenceId, 'processing');
    expect(await intake.accept(request('fails', 'retry'))).toEqual({ referenceId, fresh: false, state: 'processing' });
    expect(await redis.xlen(stream)).toBe(0);
    await started.stop();
  });

  it('finds a job still waiting in the stream, page after page, within its limit', async () => {
    const accepted = await Promise.all(
      Array.from({ length: 1_200 }, (_, n) => intake.accept(request(`waiting ${n}`, 'looked-up'))),
    );
    const oldest = accepted[0]!.referenceId;
    // The oldest is on the third page of 500, counting from the newest.
    expect(await waitingIntakeJob(redis, stream, oldest)).toEqual({
      queue: 'looked-up',
      name: 'note',
      data: { referenceId: oldest, text: 'waiting 0' },
      opts: expect.objectContaining({ attempts: 5 }),
    });
    expect(await waitingIntakeJob(redis, stream, oldest, 1_000)).toBeUndefined();
    expect(await waitingIntakeJob(redis, stream, 'never-accepted')).toBeUndefined();
    relay();
    await drained();
    expect(await waitingIntakeJob(redis, stream, oldest)).toBeUndefined();
    expect(await queues.queue('looked-up').getJob(oldest)).toBeDefined();
  });

  it('takes over what a relay read and never finished, and drops malformed entries with a log line', async () => {
    const { referenceId } = await intake.accept(request('abandoned', 'claimed'));
    // A relay that reads and dies before queueing: its entry stays pending in the group.
    await redis.xgroup('CREATE', stream, 'relay', '0', 'MKSTREAM').catch(() => undefined);
    await redis.call('XREADGROUP', 'GROUP', 'relay', 'gone', 'COUNT', 10, 'STREAMS', stream, '>');
    await redis.xadd(
      stream,
      '*',
      'outcome',
      'created',
      'referenceId',
      'x',
      'queue',
      'claimed',
      'name',
      'n',
      'data',
      '{',
    );
    relay({ claimIdleMs: 300 });
    await drained();
    expect(await queues.queue('claimed').getJob(referenceId)).toBeDefined();
    expect(await queues.queue('claimed').getJob('x')).toBeUndefined();
    expect(logs.lines).toContainEqual(expect.objectContaining({ msg: 'malformed intake entry dropped' }));
    expect(await redis.xpending(stream, 'relay')).toEqual([0, null, null, null]);
  });

  it('answers 503 while Redis is away, leaving nothing behind, and relays again once it is back', async () => {
    await intake.accept(request('before', 'later'));
    relay();
    await server.kill('SIGKILL');
    await expect(intake.accept(request('while away', 'later'))).rejects.toMatchObject({ statusCode: 503 });
    await server.restart();
    // The server came back empty: the group is made again and the request goes through.
    const accepted = await waitUntil(
      () => intake.accept(request('after', 'later')),
      10_000,
      'a request accepted once Redis is back',
    );
    expect(await status.get(referenceIdOf('note', { text: 'while away' }))).toBeUndefined();
    await drained();
    expect(await queues.queue('later').getJob(accepted.referenceId)).toBeDefined();
  });
});

describe('IntakeRelay shutdown', () => {
  it('stops within its grace period while Redis is away', async () => {
    const server = await startRedisServer();
    const logger = createLogger({
      component: 'test',
      level: 'fatal',
      pretty: false,
      destination: captureLogLines().stream,
    });
    const metrics = createMetricsRegistry('test');
    const queues = new JobQueues({ redis: server.url, keyPrefix: 'down', logger, metrics });
    const relay = new IntakeRelay({ redis: server.url, stream: 'down:intake:test', queues, logger, metrics });
    relay.start();
    // The relay is parked in its blocking read when Redis goes away.
    const admin = new Redis(server.url);
    await waitUntil(
      async () => String(await admin.client('LIST')).includes('cmd=xreadgroup'),
      10_000,
      'the relay blocked in XREADGROUP',
    );
    admin.disconnect();
    await server.kill('SIGKILL');
    // The relay's commands now wait for Redis; stopping does not. (100 ms: the relay's connection sees a local
    // socket close within milliseconds; nothing outside the relay tells when its command was queued again.)
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = Date.now();
    await relay.stop(1_000);
    expect(Date.now() - started).toBeLessThan(3_000);
    await queues.close(100);
    await server.stop();
  });
});
