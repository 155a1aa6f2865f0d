// A job whose chain is out of reach (the node restarting: "WebSocket is not connected", "disconnected") waits
// for it without spending its attempts, on a real Redis with BullMQ; any other failure still spends them.
import { startRedisServer, waitUntil, type LocalRedis } from '@frequency-gateway/devstack';
import { createLogger, createMetricsRegistry, JobQueues, type JobProcessor } from '@frequency-gateway/platform';
import { Writable } from 'node:stream';
import { ChainNotReadyError, waitingOutTheChain } from '../src/index.js';

let server: LocalRedis;
let queues: JobQueues;

beforeAll(async () => {
  server = await startRedisServer();
  const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });
  const logger = createLogger({ component: 'test', level: 'info', pretty: false, destination: quiet });
  queues = new JobQueues({ redis: server.url, keyPrefix: '{wait-test}', logger, metrics: createMetricsRegistry('t') });
});
afterAll(async () => {
  await queues?.close();
  await server?.stop();
});

/** Runs one job (2 attempts, retried at once) through `processor`; resolves with its final state and run count. */
async function runJob(queue: string, failures: Error[]) {
  let runs = 0;
  const processor: JobProcessor<unknown, string> = async () => {
    const failure = failures[runs++];
    if (failure) throw failure;
    return 'done';
  };
  const worker = queues.worker(queue, waitingOutTheChain(processor, 10));
  const job = await queues.queue(queue).add('job', {}, { attempts: 2, backoff: { type: 'fixed', delay: 10 } });
  const ended = async () => ['completed', 'failed'].includes(await job.getState());
  await waitUntil(ended, 20_000, `job ${queue} completed or failed`, 20);
  const state = await job.getState();
  await worker.close();
  return { state, runs };
}

test('a job waits out a chain out of reach for longer than its attempts would last, then completes', async () => {
  const away = [
    new Error('WebSocket is not connected'),
    new Error('disconnected from ws://127.0.0.1:9944: 1006:: Abnormal Closure'),
    new ChainNotReadyError('the connection dropped'),
    new Error('WebSocket is not connected'),
    new Error('WebSocket is not connected'),
  ];
  expect(await runJob('away', away)).toEqual({ state: 'completed', runs: away.length + 1 });
});

test('any other failure still spends its attempts', async () => {
  const broken = [new Error('the node refused it'), new Error('the node refused it'), new Error('never reached')];
  expect(await runJob('broken', broken)).toEqual({ state: 'failed', runs: 2 });
});
