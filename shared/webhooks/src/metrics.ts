import { Counter, Histogram, type Registry } from 'prom-client';

export type DeliveryOutcome = 'delivered' | 'retry' | 'dead_letter';

export interface WebhookMetrics {
  deliveries: Counter<'outcome'>;
  duration: Histogram;
}

const DELIVERIES = 'webhook_deliveries_total';
const DURATION = 'webhook_delivery_duration_seconds';

/** The webhook metrics of a registry, created on first use so that several deliverers can share them. */
export function webhookMetrics(registry: Registry): WebhookMetrics {
  const deliveries =
    (registry.getSingleMetric(DELIVERIES) as Counter<'outcome'> | undefined) ??
    new Counter({
      name: DELIVERIES,
      help: 'Webhook attempts by outcome: delivered, retry (failed, will be tried again) or dead_letter (gave up)',
      labelNames: ['outcome'],
      registers: [registry],
    });
  const duration =
    (registry.getSingleMetric(DURATION) as Histogram | undefined) ??
    new Histogram({
      name: DURATION,
      help: 'Time of one webhook attempt, from sending the request to the answer or the failure',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    });
  return { deliveries, duration };
}
