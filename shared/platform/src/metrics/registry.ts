import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';

export { Registry } from 'prom-client';

/** A registry per component, with the process metrics every component exposes. */
export function createMetricsRegistry(component: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ component });
  collectDefaultMetrics({ register: registry });
  return registry;
}

export function createHttpDurationHistogram(registry: Registry): Histogram<'method' | 'route' | 'status'> {
  return new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by method, route template and status code',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
}
