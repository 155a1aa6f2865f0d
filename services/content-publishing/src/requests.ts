import { transactionRequestFields } from '@frequency-gateway/chain';
import { serviceRequests } from '@frequency-gateway/platform';
import { z } from 'zod';

export { requestStatusVariables } from '@frequency-gateway/platform';

/**
 * Publishing requests, carried by the `content` intake. Content requests go queued → processing → batched →
 * submitted → finalized; batch announcements and on-chain content skip processing and batching. Any may end
 * failed.
 */
export const contentRequests = serviceRequests({
  intake: 'content',
  states: ['queued', 'processing', 'batched', 'submitted', 'finalized', 'failed'],
  recordId: 'RequestStatusDto',
  fields: {
    kind: z
      .enum(['broadcast', 'reply', 'reaction', 'update', 'tombstone', 'profile', 'batch-files', 'on-chain'])
      .meta({ description: 'What was asked for' }),
    msaId: z.string().optional().meta({ description: 'The user the content is from, when there is one' }),
    batch: z
      .object({ cid: z.string(), schemaId: z.number().int() })
      .optional()
      .meta({ description: 'The Parquet batch file the announcement was written to (state batched and later)' }),
  },
  outcomeFields: transactionRequestFields,
});
