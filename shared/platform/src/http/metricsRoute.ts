import { z } from 'zod';
import { defineRoute, type Route } from './route.js';
import type { Registry } from 'prom-client';

export function metricsRoute(registry: Registry): Route {
  return defineRoute({
    method: 'get',
    path: '/metrics',
    operationId: 'PrometheusController_index',
    summary: 'Prometheus metrics',
    tags: ['health'],
    access: 'open',
    responses: {
      200: { description: 'Metrics in the Prometheus text format', schema: z.string(), contentType: 'text/plain' },
    },
    handler: async (_input, { res }) => {
      res.setHeader('content-type', registry.contentType);
      res.status(200).send(await registry.metrics());
    },
  });
}
