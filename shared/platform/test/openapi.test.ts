import { Validator } from '@seriousme/openapi-schema-validator';
import { z } from 'zod';
import {
  buildOpenApiDocument,
  createLogger,
  createMetricsRegistry,
  EventLoopWatch,
  healthRoutes,
  JobQueues,
  metricsRoute,
  parseConfig,
  ReadinessController,
  requestStatusRoutes,
  type HttpSurface,
  type OpenApiDocument,
  type RequestStatusStore,
  type Route,
} from '../src/index.js';
import { testComponent, testConfig } from './support/testComponent.js';

type Operation = {
  operationId: string;
  parameters?: unknown[];
  requestBody?: unknown;
  security?: Record<string, string[]>[];
  responses: Record<string, { content?: Record<string, { schema?: Record<string, unknown> }>; headers?: object }>;
};

/** Every operation of the document with its method and path. */
function operationsOf(document: OpenApiDocument) {
  return Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item as Record<string, Operation>).map(([method, operation]) => ({ method, path, operation })),
  );
}

/**
 * What the document fails to say that the component answers: 400 for an operation with input, 431 for every
 * operation, the error envelope for every error without a body of its own.
 */
function undocumented(document: OpenApiDocument): string[] {
  const problems: string[] = [];
  for (const { method, path, operation } of operationsOf(document)) {
    const at = `${method.toUpperCase()} ${path}`;
    const responses = operation.responses;
    if ((operation.parameters?.length || operation.requestBody) && !responses['400']) problems.push(`${at}: no 400`);
    if (!responses['431']) problems.push(`${at}: no 431`);
    for (const [status, response] of Object.entries(responses)) {
      if (Number(status) >= 400 && !response.content) problems.push(`${at}: ${status} has no body`);
    }
  }
  return problems;
}

/** The operations of the document besides health and metrics, sorted: those a token or the rate limit applies to. */
const SERVICE_OPERATIONS = [
  'RequestControllerV1_getRequestEvents_v1',
  'RequestControllerV1_getRequest_v1',
  'broken',
  'createWidget',
  'getShelf',
  'slow',
];

describe('OpenAPI document', () => {
  let routes: Route[];

  beforeAll(async () => {
    const logger = createLogger({ component: 't', level: 'silent', pretty: false });
    const metrics = createMetricsRegistry('t');
    const readiness = new ReadinessController({ logger });
    const eventLoop = new EventLoopWatch(1000);
    const config = parseConfig(testConfig, { REDIS_URL: 'redis://127.0.0.1:1' });
    const queues = new JobQueues({ redis: config.REDIS_URL, keyPrefix: 't', logger, metrics });
    const parts = await testComponent.setup({ config, logger, metrics, readiness, queues } as unknown as Parameters<
      typeof testComponent.setup
    >[0]);
    // The document only reads the routes' declarations: no store is ever asked anything.
    const requests = requestStatusRoutes({
      store: {} as RequestStatusStore,
      recordSchema: z.object({ referenceId: z.string(), state: z.string() }),
      signal: new AbortController().signal,
    });
    routes = [
      ...healthRoutes({ component: 't', version: '1', readiness, eventLoop, startedAt: new Date() }),
      metricsRoute(metrics),
      ...(parts.routes ?? []),
      ...requests,
    ];
    eventLoop.stop();
    await queues.close(0);
  });

  const surfaces: [string, HttpSurface][] = [
    ['plain', {}],
    ['with tokens', { bearer: { protectReads: false } }],
    ['with tokens for reads and a rate limit', { bearer: { protectReads: true }, rateLimitPerMinute: 100 }],
  ];

  it.each(surfaces)('is valid OpenAPI 3.1 and documents every answer (%s)', async (_name, surface) => {
    const document = buildOpenApiDocument({ title: 'Test', version: '1.0.0' }, routes, [], surface);
    const validator = new Validator();
    const result = await validator.validate(document as unknown as Parameters<Validator['validate']>[0]);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    expect(undocumented(document)).toEqual([]);
  });

  it('describes every declared operation', () => {
    const document = buildOpenApiDocument({ title: 'Test', version: '1.0.0' }, routes);
    expect(
      operationsOf(document)
        .map((op) => op.operation.operationId)
        .sort(),
    ).toEqual([
      'HealthController_healthz',
      'HealthController_livez',
      'HealthController_readyz',
      'PrometheusController_index',
      ...SERVICE_OPERATIONS,
    ]);
    const create = document.paths?.['/v1/widgets/{shelf}']?.post;
    expect(create?.parameters?.map((p) => ('name' in p ? p.name : ''))).toEqual(['shelf', 'dryRun']);
    expect(JSON.stringify(create?.requestBody)).toContain('#/components/schemas/Widget');
    expect(JSON.stringify(create?.responses?.['400'])).toContain('#/components/schemas/ErrorResponse');
    // Only an operation with a JSON body can be refused for its size.
    expect(Object.keys(create?.responses ?? {})).toContain('413');
    expect(Object.keys(document.paths?.['/v1/shelves/{shelf}']?.get?.responses ?? {})).not.toContain('413');
    // Health and metrics answer without any dependency they do not report themselves.
    expect(Object.keys(document.paths?.['/healthz']?.get?.responses ?? {})).toEqual(['200', '431']);
  });

  it('types the server-sent events as text/event-stream, the schema describing one event as generic tools read it', () => {
    const document = buildOpenApiDocument({ title: 'Test', version: '1.0.0' }, routes);
    const events = document.paths?.['/v1/requests/{referenceId}/events']?.get as unknown as Operation;
    const content = events.responses['200']?.content ?? {};
    expect(Object.keys(content)).toEqual(['text/event-stream']);
    const schemas = document.components?.schemas as Record<string, unknown>;
    expect(content['text/event-stream']?.schema).toEqual({ $ref: '#/components/schemas/RequestStateEvent' });
    expect(schemas.RequestStateEvent).toMatchObject({
      type: 'object',
      properties: {
        event: { type: 'string', enum: ['state'] },
        id: { type: 'string' },
        data: { type: 'string', contentMediaType: 'application/json' },
      },
      required: ['event', 'id', 'data'],
    });
    expect(events.responses['400']).toBeDefined();
  });

  it('names the bearer scheme, and asks for it and documents 401 exactly where a token is needed', () => {
    const writesOnly = buildOpenApiDocument({ title: 'T', version: '1' }, routes, [], {
      bearer: { protectReads: false },
    });
    expect(writesOnly.components?.securitySchemes).toEqual({
      bearer: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    });
    const guarded = (document: OpenApiDocument) =>
      operationsOf(document)
        .filter(({ operation }) => operation.security !== undefined || operation.responses['401'] !== undefined)
        .map(({ operation }) => [
          operation.operationId,
          operation.security,
          Object.keys(operation.responses['401'] ?? {}),
        ]);
    expect(guarded(writesOnly)).toEqual([['createWidget', [{ bearer: [] }], ['description', 'headers', 'content']]]);

    const everything = buildOpenApiDocument({ title: 'T', version: '1' }, routes, [], {
      bearer: { protectReads: true },
    });
    expect(
      guarded(everything)
        .map(([id]) => id)
        .sort(),
    ).toEqual(SERVICE_OPERATIONS);

    const none = buildOpenApiDocument({ title: 'T', version: '1' }, routes);
    expect(none.components?.securitySchemes).toBeUndefined();
    expect(guarded(none)).toEqual([]);
  });

  it('documents 429 with Retry-After on every operation but health and metrics exactly when a limit is on', () => {
    const limited = buildOpenApiDocument({ title: 'T', version: '1' }, routes, [], { rateLimitPerMinute: 10 });
    const with429 = (document: OpenApiDocument) =>
      operationsOf(document)
        .filter(({ operation }) => operation.responses['429'])
        .map(({ operation }) => operation.operationId)
        .sort();
    expect(with429(limited)).toEqual(SERVICE_OPERATIONS);
    expect(JSON.stringify(limited.paths?.['/v1/slow']?.get?.responses?.['429'])).toContain('Retry-After');
    expect(with429(buildOpenApiDocument({ title: 'T', version: '1' }, routes))).toEqual([]);
  });
});
