import type { TransactionNotifier, TransactionStatus } from '@frequency-gateway/webhooks';
import type { Publication, PublishError } from './publications.js';

export type NotificationStatus = TransactionStatus;

/** The body of a content transaction notification (the reference gateway's fields, plus the block number). */
export interface ContentNotification {
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

/**
 * The outcomes of publications as transaction notifications: one per request, with the on-chain message's
 * schema, intent and user when the publication is on-chain content.
 */
export class OutcomeNotifier {
  constructor(
    private readonly notifier: TransactionNotifier,
    private readonly providerId: string,
  ) {}

  async notify(
    publication: Pick<Publication, 'transactionType' | 'messages' | 'msaId'>,
    referenceIds: string[],
    status: NotificationStatus,
    details: Omit<ContentNotification, 'transactionType' | 'providerId' | 'referenceId' | 'status'>,
  ): Promise<void> {
    const first = publication.messages[0];
    const onChain =
      first?.kind === 'on-chain'
        ? {
            schemaId: first.schemaId,
            intentId: first.intentId,
            ...(first.onBehalfOf ? { msaId: first.onBehalfOf } : {}),
          }
        : {};
    await this.notifier.notify(
      referenceIds.map(
        (referenceId) =>
          ({
            transactionType: publication.transactionType,
            providerId: this.providerId,
            referenceId,
            status,
            ...details,
            ...onChain,
          }) satisfies ContentNotification,
      ),
    );
  }
}
