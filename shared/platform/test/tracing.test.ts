import {
  startOtlpReceiver,
  startRedisServer,
  waitUntil,
  type LocalRedis,
  type OtlpReceiver,
} from '@frequency-gateway/devstack';
import {
  activeTraceIds,
  createHttpApp,
  createLogger,
  createMetricsRegistry,
  defineRoute,
  inSpan,
  JobQueues,
  listen,
  startTracing,
  TRACE_CONTEXT_FIELD,
  type RunningServer,
  type Tracing,
} from '../src/index.js';
import { captureLogLines } from './support/logLines.js';

// Tracing on in this test file's process (jest gives each file its own globals, so the provider stays here).
describe('tracing on: spans, their parents across a queue and an HTTP call, trace ids in log lines', () => {
  let collector: OtlpReceiver;
  let redis: LocalRedis;
  let tracing: Tracing | undefined;
  let queues: JobQueues;
  let server: RunningServer;
  const { stream, lines } = captureLogLines();
  const logger = createLogger({
    component: 'tracing-test',
    level: 'info',
    pretty: false,
    destination: stream,
    traceIds: activeTraceIds,
  });

  beforeAll(async () => {
    [collector, redis] = await Promise.all([startOtlpReceiver(), startRedisServer()]);
    tracing = await startTracing({
      endpoint: collector.url,
      serviceName: 'tracing-test',
      serviceVersion: '0.0.0',
      logger,
    });
    queues = new JobQueues({ redis: redis.url, keyPrefix: 'traced', logger, metrics: createMetricsRegistry('t') });
    const { app } = createHttpApp({
      logger,
      metrics: createMetricsRegistry('http'),
      info: { title: 't', version: '0', description: 't' },
      tracing: true,
      routes: [
        defineRoute({
          method: 'post',
          path: '/things',
          operationId: 'queueThing',
          summary: 'queue a thing',
          responses: { 202: { description: 'queued' } },
          handler: async () => {
            await queues.queue('things').add('thing', { what: 'a thing' });
            return { status: 202 };
          },
        }),
      ],
    });
    server = await listen(app, 0, '127.0.0.1');
  }, 60_000);
  afterAll(async () => {
    await server?.close(1_000, 0);
    await queues?.close(1_000);
    await tracing?.shutdown();
    await Promise.all([redis?.stop(), collector?.stop()]);
  });

  it('is on: a tracing line names where spans go', () => {
    expect(tracing).toBeDefined();
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'tracing on: spans exported over OTLP/HTTP' }));
  });

  it("continues the caller's trace through the request, the job it queued and the job's log line", async () => {
    const processed: unknown[] = [];
    queues.worker('things', async (job, { log }) => {
      processed.push(job.data);
      log.info('processing the thing');
    });
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpan = '00f067aa0ba902b7';
    const answer = await fetch(`${server.url}/things`, {
      method: 'POST',
      headers: { traceparent: `00-${traceId}-${callerSpan}-01` },
    });
    expect(answer.status).toBe(202);
    await waitUntil(async () => processed.length === 1, 10_000, 'the job processed');
    // The processor sees the data as queued: the trace context was taken out of it.
    expect(processed).toEqual([{ what: 'a thing' }]);

    const spans = await waitUntil(
      async () => {
        const mine = collector.spans.filter((span) => span.traceId === traceId);
        return mine.length >= 2 ? mine : undefined;
      },
      10_000,
      'the request and job spans exported',
    );
    const request = spans.find((span) => span.name === 'POST /things')!;
    const job = spans.find((span) => span.name === 'things process')!;
    expect(request).toMatchObject({ parentSpanId: callerSpan, kind: 2 });
    expect(request.attributes).toMatchObject({ 'http.route': '/things', 'http.response.status_code': 202 });
    expect(job).toMatchObject({ parentSpanId: request.spanId, kind: 5 });
    expect(job.attributes).toMatchObject({ 'messaging.system': 'bullmq', 'messaging.destination.name': 'things' });
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: 'processing the thing', trace_id: traceId, span_id: job.spanId }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: 'request', route: '/things', trace_id: traceId, span_id: request.spanId }),
    );
  });

  it('carries the trace context in the job data in Redis, under its own key', async () => {
    const queue = queues.queue('carried');
    const added = await inSpan('producer', {}, async () => queue.add('x', { n: 1 }));
    const stored = await queue.getJob(added.id!);
    expect(stored!.data).toEqual({
      n: 1,
      [TRACE_CONTEXT_FIELD]: { traceparent: expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/) },
    });
  });
});
