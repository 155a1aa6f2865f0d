import { transactionRequestFields } from '@frequency-gateway/chain';
import { serviceRequests } from '@frequency-gateway/platform';
import { z } from 'zod';
import { TRANSACTION_TYPES } from './jobs.js';

/** Account requests: queued → submitted → finalized, or failed at any point; carried by the `account` intake. */
export const accountRequests = serviceRequests({
  intake: 'account',
  states: ['queued', 'submitted', 'finalized', 'failed'],
  recordId: 'AccountRequestStatusDto',
  fields: {
    kind: z.enum(TRANSACTION_TYPES).meta({ description: 'The transaction type asked for' }),
    accountId: z.string().optional().meta({ description: "The user's account (SS58)" }),
    msaId: z.string().optional().meta({ description: "The user's MSA id, once the account exists" }),
    handle: z
      .string()
      .optional()
      .meta({ description: 'The handle claimed or changed to, `<base>.<suffix>`, once finalized' }),
    calls: z
      .array(z.object({ section: z.string(), method: z.string() }))
      .optional()
      .meta({ description: 'The chain calls the provider submits for the request' }),
  },
  outcomeFields: transactionRequestFields,
});
