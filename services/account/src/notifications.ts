import { requestErrorSchema } from '@frequency-gateway/chain';
import { deliveredWebhookSpec } from '@frequency-gateway/webhooks';
import { z } from 'zod';
import { TRANSACTION_TYPES } from './jobs.js';

/** The body of a transaction notification, as POSTed to {WEBHOOK_BASE_URL}/webhooks/transaction-notify. */
export const transactionNotificationSchema = z
  .object({
    transactionType: z.enum(TRANSACTION_TYPES),
    providerId: z.string().meta({
      description:
        'MSA id of the provider: this gateway, except for REVOKE_DELEGATION where it is the provider whose delegation was revoked',
    }),
    referenceId: z.string().meta({ description: 'The request: signUpReferenceId of the sign-in answer' }),
    status: z.enum(['SUCCESS', 'FAILED', 'EXPIRED']),
    txHash: z.string().optional(),
    blockHash: z.string().optional().meta({ description: 'The block that included it (or where it expired)' }),
    blockNumber: z.number().int().optional(),
    msaId: z.string().optional().meta({ description: "The user's MSA (SUCCESS)" }),
    accountId: z.string().optional().meta({ description: "The user's account, SS58" }),
    handle: z
      .string()
      .optional()
      .meta({ description: 'The handle claimed, `<base>.<suffix>` (SUCCESS of a sign-up or handle request)' }),
    newPublicKey: z.string().optional().meta({ description: 'The key added, SS58 (ADD_KEY)' }),
    calls: z
      .array(z.object({ section: z.string(), method: z.string() }))
      .optional()
      .meta({ description: 'The calls of the batch, in order (CAPACITY_BATCH)' }),
    capacityWithdrawnEvent: z
      .object({ msaId: z.string(), amount: z.string() })
      .optional()
      .meta({ description: 'The capacity the batch cost and who paid it (CAPACITY_BATCH)' }),
    error: requestErrorSchema.optional().meta({
      description:
        'Why it failed (FAILED, EXPIRED); chain errors carry the pallet and error names, the pallet index and the error code',
    }),
  })
  .meta({ id: 'AccountTransactionNotification' });

export type AccountNotification = z.infer<typeof transactionNotificationSchema>;

/** The webhook as the OpenAPI document publishes it. */
export const transactionNotifyWebhook = deliveredWebhookSpec({
  name: 'transaction-notify',
  operationId: 'transactionNotify',
  summary: 'POST {WEBHOOK_BASE_URL}/webhooks/transaction-notify: how a request ended',
  sentWhen: 'Sent once per request and final status by the worker',
  body: transactionNotificationSchema,
});
