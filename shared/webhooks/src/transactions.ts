import { variable } from '@frequency-gateway/platform';
import { z } from 'zod';
import type { WebhookDelivery } from './webhookDelivery.js';

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
