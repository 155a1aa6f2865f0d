import { PassThrough } from 'node:stream';
import type { Queue } from 'bullmq';
import {
  allowedDestinations,
  createLogger,
  JobQueues,
  LOOPBACK_DESTINATIONS,
  OutboundPolicy,
  Registry,
  type Logger,
} from '@frequency-gateway/platform';
import { WebhookDelivery, type DeliveryOutcome, type WebhookSettings } from '../../src/index.js';

/** Small delays, so that retries take a fraction of a second. */
export function testSettings(overrides: Partial<WebhookSettings> = {}): WebhookSettings {
  return { maxAttempts: 5, retryBaseMs: 100, retryMaxMs: 5_000, timeoutMs: 2_000, concurrency: 5, ...overrides };
}

/** A logger whose JSON lines are kept in memory (debug level, so nothing is filtered out). */
export function capturedLogger(): { logger: Logger; text(): string } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const logger = createLogger({ component: 'webhooks-test', level: 'debug', pretty: false, destination: stream });
  return { logger, text: () => text };
}

/** One process's delivery: its own JobQueues, metrics and WebhookDelivery. */
export interface DeliveryProcess {
  queues: JobQueues;
  metrics: Registry;
  delivery: WebhookDelivery;
  outcomes(): Promise<Record<DeliveryOutcome, number>>;
  close(): Promise<void>;
}

/** The policy of the test receivers: public destinations and this machine's loopback interface. */
export const loopbackPolicy = () => new OutboundPolicy({ allowed: allowedDestinations(LOOPBACK_DESTINATIONS) });

export function openDelivery(
  redisUrl: string,
  keyPrefix: string,
  settings: WebhookSettings,
  logger: Logger = capturedLogger().logger,
  outbound: OutboundPolicy = loopbackPolicy(),
): DeliveryProcess {
  const metrics = new Registry();
  const queues = new JobQueues({ redis: redisUrl, keyPrefix, logger, metrics });
  const delivery = new WebhookDelivery({ queues, settings, logger, metrics, outbound });
  return {
    queues,
    metrics,
    delivery,
    outcomes: async () => {
      const counts: Record<DeliveryOutcome, number> = { delivered: 0, retry: 0, dead_letter: 0 };
      const metric = await metrics.getSingleMetric('webhook_deliveries_total')?.get();
      for (const { labels, value } of metric?.values ?? []) counts[labels.outcome as DeliveryOutcome] = value;
      return counts;
    },
    close: () => queues.close(1_000),
  };
}

/** No delivery left to attempt: nothing waiting, running or scheduled for a retry (so no repeat can arrive). */
export async function deliveriesSettled(queue: Pick<Queue, 'getJobCounts'>): Promise<boolean> {
  const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
  return Object.values(counts).every((count) => count === 0);
}
