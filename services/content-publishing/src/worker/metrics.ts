import { Counter, Histogram, type Registry } from 'prom-client';

/** The worker's own metrics, registered once per process: a pipeline start tried again reuses them. */
export interface PublishingMetrics {
  /** content_announcements_batched_total{type}: announcements added to batches. */
  batched: Counter<'type'>;
  /** content_batch_rows: rows in each batch file written. */
  batchRows: Histogram;
  /** content_publish_transactions_total{outcome}: capacity transactions by outcome of their submission. */
  transactions: Counter<'outcome'>;
  /** content_publish_calls_per_transaction: messages packed in each submitted transaction. */
  callsPerTransaction: Histogram;
  /** content_requests_finished_total{outcome}: requests that reached a final state. */
  finished: Counter<'outcome'>;
}

export function publishingMetrics(registry: Registry): PublishingMetrics {
  const registers = [registry];
  return {
    batched: new Counter({
      name: 'content_announcements_batched_total',
      help: 'Announcements added to batches, by announcement type',
      labelNames: ['type'],
      registers,
    }),
    batchRows: new Histogram({
      name: 'content_batch_rows',
      help: 'Rows in each announcement batch file written',
      buckets: [1, 10, 50, 100, 250, 500, 1000, 2500, 5000, 10000],
      registers,
    }),
    transactions: new Counter({
      name: 'content_publish_transactions_total',
      help: 'Capacity transactions submitted by the publisher, by outcome of the submission',
      labelNames: ['outcome'],
      registers,
    }),
    callsPerTransaction: new Histogram({
      name: 'content_publish_calls_per_transaction',
      help: 'Messages packed in each submitted transaction',
      buckets: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 50],
      registers,
    }),
    finished: new Counter({
      name: 'content_requests_finished_total',
      help: 'Publishing requests that reached a final state, by state',
      labelNames: ['outcome'],
      registers,
    }),
  };
}
