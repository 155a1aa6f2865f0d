import type { TransactionNotifier, TransactionStatus } from '@frequency-gateway/webhooks';
import type { PublishError, RequestEnd, RequestEndListener, TransactionType } from '../requestRecords.js';

/** The body of a content transaction notification (the reference gateway's fields, plus the block number). */
export type ContentNotification = {
  transactionType: TransactionType;
  providerId: string;
  referenceId: string;
  status: TransactionStatus;
  txHash?: string;
  blockHash?: string;
  blockNumber?: number;
  msaId?: string;
  schemaId?: number;
  intentId?: number;
  error?: PublishError;
};

/**
 * The last stage: each request's end as a transaction notification (a durable, signed webhook), with the on-chain
 * message's schema, intent and user when the request was on-chain content.
 */
export class OutcomeNotifier implements RequestEndListener {
  constructor(
    private readonly notifier: TransactionNotifier,
    private readonly providerId: string,
  ) {}

  async ended(end: RequestEnd): Promise<void> {
    const { referenceIds, transactionType, onChain, status, txHash, blockHash, blockNumber, error } = end;
    // Fields without a value (no transaction before a request was batched) are left out of the JSON body.
    await this.notifier.notify(
      referenceIds.map((referenceId): ContentNotification => ({
        transactionType,
        providerId: this.providerId,
        referenceId,
        status,
        txHash,
        blockHash,
        blockNumber,
        error,
        ...onChain,
      })),
    );
  }
}
