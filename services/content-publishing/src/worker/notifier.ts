import type { WebhookDelivery } from '@frequency-gateway/webhooks';
import type { Publication, PublishError } from './publications.js';

export type NotificationStatus = 'SUCCESS' | 'FAILED' | 'EXPIRED';

/** The body of a transaction notification (the reference gateway's fields, plus the block number). */
export interface TransactionNotification {
  transactionType: Publication['transactionType'];
  providerId: string;
  referenceId: string;
  status: NotificationStatus;
  txHash?: string;
  blockHash?: string;
  blockNumber?: number;
  msaId?: string;
  schemaId?: number;
  intentId?: number;
  error?: PublishError;
}

/** Where notifications go under WEBHOOK_BASE_URL. */
export const NOTIFICATION_PATH = '/webhooks/transaction-notify';

/**
 * Tells the application how each request ended, once: one webhook per request and final status (its id is
 * `<referenceId>.<status>`, so a repeated outcome is not delivered twice), through the durable delivery queue.
 * Without WEBHOOK_BASE_URL nothing is sent; the outcome is still at GET /v1/requests/{referenceId}.
 */
export class OutcomeNotifier {
  private readonly url: string | undefined;

  constructor(
    private readonly delivery: WebhookDelivery | undefined,
    baseUrl: string | undefined,
    private readonly providerId: string,
  ) {
    this.url = baseUrl === undefined ? undefined : `${baseUrl.replace(/\/+$/, '')}${NOTIFICATION_PATH}`;
  }

  async notify(
    publication: Pick<Publication, 'transactionType' | 'messages' | 'msaId'>,
    referenceIds: string[],
    status: NotificationStatus,
    details: Omit<TransactionNotification, 'transactionType' | 'providerId' | 'referenceId' | 'status'>,
  ): Promise<void> {
    if (!this.delivery || !this.url || referenceIds.length === 0) return;
    const first = publication.messages[0];
    const onChain =
      first?.kind === 'on-chain'
        ? {
            schemaId: first.schemaId,
            intentId: first.intentId,
            ...(first.onBehalfOf ? { msaId: first.onBehalfOf } : {}),
          }
        : {};
    const url = this.url;
    await this.delivery.enqueueMany(
      referenceIds.map((referenceId) => ({
        id: `${referenceId}.${status}`,
        url,
        event: `${publication.transactionType}.${status}`,
        body: {
          transactionType: publication.transactionType,
          providerId: this.providerId,
          referenceId,
          status,
          ...details,
          ...onChain,
        } satisfies TransactionNotification,
      })),
    );
  }
}
