import { startRedisServer, type LocalRedis } from '@frequency-gateway/devstack';
import {
  createLogger,
  createMetricsRegistry,
  currentTraceCarrier,
  inSpan,
  JobQueues,
  startTracing,
  traceHeaders,
  withTraceContext,
} from '../src/index.js';
import { captureLogLines } from './support/logLines.js';

// Without OTEL_EXPORTER_OTLP_ENDPOINT nothing of the SDK starts: the API's no-op tracer answers, and nothing is carried.
describe('tracing off', () => {
  let redis: LocalRedis;
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('starts nothing without an endpoint; spans are no-ops that carry nothing', async () => {
    const { stream, lines } = captureLogLines();
    const logger = createLogger({ component: 'off', level: 'info', pretty: false, destination: stream });
    expect(
      await startTracing({ endpoint: undefined, serviceName: 'off', serviceVersion: '0', logger }),
    ).toBeUndefined();
    const data = { n: 1 };
    await inSpan('nothing', {}, async (span) => {
      expect(span.isRecording()).toBe(false);
      expect(currentTraceCarrier()).toBeUndefined();
      expect(traceHeaders()).toEqual({});
      // The very same object: nothing copied, nothing added.
      expect(withTraceContext(data)).toBe(data);
      logger.info('inside');
    });
    expect(lines.find((line) => line.msg === 'inside')).not.toHaveProperty('trace_id');
  });

  it('queues job data exactly as given', async () => {
    const logger = createLogger({ component: 'off', level: 'warn', pretty: false });
    const queues = new JobQueues({
      redis: redis.url,
      keyPrefix: 'off',
      logger,
      metrics: createMetricsRegistry('off'),
    });
    try {
      const queue = queues.queue('plain');
      const added = await inSpan('producer', {}, async () => queue.add('x', { n: 1 }));
      expect((await queue.getJob(added.id!))!.data).toEqual({ n: 1 });
    } finally {
      await queues.close(1_000);
    }
  });
});
