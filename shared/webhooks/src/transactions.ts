import {
  outboundPolicy,
  shownUrl,
  variable,
  type ConfigOf,
  type JobQueues,
  type Logger,
  type OutboundConfig,
  type ReadinessController,
} from '@frequency-gateway/platform';
import type { Registry } from 'prom-client';
import { z } from 'zod';
import { webhookSettings, type WebhookConfig } from './config.js';
import { webhookDestinationCheck } from './destinationCheck.js';
import { WebhookDelivery } from './webhookDelivery.js';

/** How a transaction the gateway submitted for a request ended. */
export type TransactionStatus = 'SUCCESS' | 'FAILED' | 'EXPIRED';

/** Where transaction notifications go under WEBHOOK_BASE_URL. */
export const TRANSACTION_NOTIFY_PATH = '/webhooks/transaction-notify';

/** WEBHOOK_BASE_URL: the application's base URL for transaction notifications (unset: none are sent). */
export function transactionWebhookVariables() {
  return {
    WEBHOOK_BASE_URL: variable(
      z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
      'Where outcomes are notified: POST {WEBHOOK_BASE_URL}/webhooks/transaction-notify; unset: no webhooks',
      { urlWithCredentials: true, example: 'http://my-app:8080' },
    ),
  };
}

export type TransactionWebhookConfig = ConfigOf<ReturnType<typeof transactionWebhookVariables>>;

/** One request's outcome, as a transaction notification carries it. */
export interface TransactionNotification {
  transactionType: string;
  referenceId: string;
  status: TransactionStatus;
  /** The rest of the body (providerId, txHash, blockHash, msaId, error...). */
  [field: string]: unknown;
}

/**
 * Tells the application how each request ended, once: one webhook per request and final status (its delivery
 * id is `<referenceId>.<status>`, so an outcome seen again is not delivered twice), sent through the durable
 * delivery queue to `{WEBHOOK_BASE_URL}/webhooks/transaction-notify`. Without a base URL nothing is sent.
 */
export class TransactionNotifier {
  private readonly url: string | undefined;

  constructor(
    private readonly delivery: WebhookDelivery | undefined,
    baseUrl: string | undefined,
  ) {
    this.url = baseUrl === undefined ? undefined : `${baseUrl.replace(/\/+$/, '')}${TRANSACTION_NOTIFY_PATH}`;
  }

  async notify(notifications: readonly TransactionNotification[]): Promise<void> {
    const { delivery, url } = this;
    if (!delivery || !url || notifications.length === 0) return;
    await delivery.enqueueMany(
      notifications.map((body) => ({
        id: `${body.referenceId}.${body.status}`,
        url,
        event: `${body.transactionType}.${body.status}`,
        body,
      })),
    );
  }
}

/**
 * The transaction notifier of a worker: with WEBHOOK_BASE_URL, a started delivery queue under the outbound
 * policy and a reported health check of the destination (down, naming the rule, while the policy refuses it;
 * its deliveries are then dead letters, never sent). Without it, a notifier that sends nothing.
 */
export function startTransactionNotifier(parts: {
  config: WebhookConfig & TransactionWebhookConfig & OutboundConfig;
  queues: JobQueues;
  logger: Logger;
  metrics: Registry;
  readiness: ReadinessController;
}): TransactionNotifier {
  const { config, queues, logger, metrics, readiness } = parts;
  const baseUrl = config.WEBHOOK_BASE_URL;
  if (baseUrl === undefined) return new TransactionNotifier(undefined, undefined);
  const outbound = outboundPolicy(config);
  const refusal = outbound.refusal(baseUrl);
  if (refusal)
    logger.error(
      { webhookBaseUrl: shownUrl(baseUrl), reason: refusal },
      'WEBHOOK_BASE_URL is refused by the outbound policy: transaction webhooks will be dead letters, never sent',
    );
  readiness.add(webhookDestinationCheck('webhook-destination', outbound, baseUrl));
  const delivery = new WebhookDelivery({ queues, settings: webhookSettings(config), logger, metrics, outbound });
  delivery.start();
  return new TransactionNotifier(delivery, baseUrl);
}
