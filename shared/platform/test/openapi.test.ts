import { Validator } from '@seriousme/openapi-schema-validator';
import {
  buildOpenApiDocument,
  createMetricsRegistry,
  EventLoopWatch,
  healthRoutes,
  metricsRoute,
  ReadinessController,
  createLogger,
} from '../src/index.js';
import { testComponent, testConfig } from './support/testComponent.js';
import { parseConfig } from '../src/index.js';
import { JobQueues } from '../src/index.js';

describe('OpenAPI document', () => {
  it('is valid OpenAPI 3.1 and describes every declared operation', async () => {
    const logger = createLogger({ component: 't', level: 'silent', pretty: false });
    const metrics = createMetricsRegistry('t');
    const readiness = new ReadinessController({ logger });
    const eventLoop = new EventLoopWatch(1000);
    const config = parseConfig(testConfig, { REDIS_URL: 'redis://127.0.0.1:1' });
    const queues = new JobQueues({ redisUrl: config.REDIS_URL, keyPrefix: 't', logger, metrics });
    const parts = await testComponent.setup({ config, logger, metrics, readiness, queues } as unknown as Parameters<
      typeof testComponent.setup
    >[0]);
    const routes = [
      ...healthRoutes({ component: 't', version: '1', readiness, eventLoop, startedAt: new Date() }),
      metricsRoute(metrics),
      ...(parts.routes ?? []),
    ];
    const document = buildOpenApiDocument({ title: 'Test', version: '1.0.0' }, routes);
    eventLoop.stop();
    await queues.close(0);

    const validator = new Validator();
    const result = await validator.validate(document as unknown as Parameters<Validator['validate']>[0]);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');

    const operationIds = Object.values(document.paths ?? {}).flatMap((item) =>
      Object.values(item as Record<string, { operationId?: string }>).map((op) => op.operationId),
    );
    expect(operationIds.sort()).toEqual([
      'HealthController_healthz',
      'HealthController_livez',
      'HealthController_readyz',
      'PrometheusController_index',
      'broken',
      'createWidget',
      'getShelf',
      'slow',
    ]);
    const create = document.paths?.['/v1/widgets/{shelf}']?.post;
    expect(create?.parameters?.map((p) => ('name' in p ? p.name : ''))).toEqual(['shelf', 'dryRun']);
    expect(JSON.stringify(create?.requestBody)).toContain('#/components/schemas/Widget');
  });
});
