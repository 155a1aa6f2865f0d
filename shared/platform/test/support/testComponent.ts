import { PassThrough } from 'node:stream';
import { z } from 'zod';
import {
  apiVariables,
  commonVariables,
  defineRoute,
  startComponent,
  type ComponentDefinition,
  type ConfigSpec,
  type StartOptions,
} from '../../src/index.js';

export const testConfig = {
  ...commonVariables({ cacheKeyPrefix: 'test' }),
  ...apiVariables({ port: 0 }),
};

const widget = z.object({ name: z.string().min(2), size: z.number().int().positive() }).meta({ id: 'Widget' });

/**
 * A small api component exercising the platform: a validated route that queues a job, a look-up on the
 * component's own Redis connection, a failing route, a slow route.
 */
export const testComponent: ComponentDefinition<typeof testConfig> = {
  name: 'test-api',
  title: 'Test API',
  description: 'A component used by the platform tests',
  version: '1.2.3',
  config: testConfig,
  portVariable: 'API_PORT',
  setup: ({ queues, redis }) => {
    const widgets = queues.queue('widgets');
    return {
      queueBoard: true,
      routes: [
        defineRoute({
          method: 'post',
          path: '/v1/widgets/{shelf}',
          operationId: 'createWidget',
          summary: 'Create a widget',
          tags: ['widgets'],
          params: z.object({ shelf: z.string().regex(/^[a-z]+$/) }),
          query: z.object({ dryRun: z.stringbool().optional() }),
          body: widget,
          responses: { 202: { description: 'Queued', schema: z.object({ jobId: z.string() }) } },
          handler: async ({ params, body }) => {
            const job = await widgets.add('widget', { shelf: params.shelf, ...body });
            return { status: 202, body: { jobId: String(job.id) } };
          },
        }),
        defineRoute({
          method: 'get',
          path: '/v1/shelves/{shelf}',
          operationId: 'getShelf',
          summary: 'How many widgets a shelf holds',
          tags: ['widgets'],
          params: z.object({ shelf: z.string().regex(/^[a-z]+$/) }),
          responses: { 200: { description: 'The count', schema: z.object({ widgets: z.number() }) } },
          handler: async ({ params }) => ({
            status: 200,
            body: { widgets: Number((await redis.hget('test:shelves', params.shelf)) ?? 0) },
          }),
        }),
        defineRoute({
          method: 'get',
          path: '/v1/broken',
          operationId: 'broken',
          summary: 'Always fails',
          responses: { 500: { description: 'Failure' } },
          handler: () => {
            throw new Error('database exploded');
          },
        }),
        defineRoute({
          method: 'get',
          path: '/v1/slow',
          operationId: 'slow',
          summary: 'Answers after a while',
          query: z.object({ ms: z.coerce.number().int().min(0).max(10_000).default(1000) }),
          responses: { 200: { description: 'Done', schema: z.object({ waitedMs: z.number() }) } },
          handler: async ({ query }, { log }) => {
            // Tests wait for this line to know the request is in flight.
            log.info({ ms: query.ms }, 'slow request started');
            await new Promise((resolve) => setTimeout(resolve, query.ms));
            return { status: 200, body: { waitedMs: query.ms } };
          },
        }),
      ],
    };
  },
};

/** Starts a component in this process on a free port, capturing its log lines. */
export async function startTestComponent<S extends ConfigSpec>(
  definition: ComponentDefinition<S>,
  env: NodeJS.ProcessEnv,
  options: Pick<StartOptions, 'kubeConfig'> = {},
) {
  const logStream = new PassThrough();
  const logs: string[] = [];
  logStream.on('data', (chunk: Buffer) => logs.push(...chunk.toString().split('\n').filter(Boolean)));
  const started = await startComponent(definition, {
    env: { READINESS_INTERVAL_MS: '200', READINESS_TIMEOUT_MS: '500', SHUTDOWN_GRACE_MS: '5000', ...env },
    port: 0,
    logDestination: logStream,
    ...options,
  });
  return { ...started, logs };
}
