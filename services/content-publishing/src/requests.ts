import { transactionRequestFields } from '@frequency-gateway/chain';
import { RequestStatusStore } from '@frequency-gateway/platform';
import type { Redis } from 'ioredis';
import { z } from 'zod';

export { requestStatusVariables } from '@frequency-gateway/platform';

/**
 * The states of a publishing request. Content requests go queued → processing → batched → submitted →
 * finalized; batch announcements and on-chain content skip processing and batching. Any may end failed.
 */
export const REQUEST_STATES = ['queued', 'processing', 'batched', 'submitted', 'finalized', 'failed'] as const;
export type RequestState = (typeof REQUEST_STATES)[number];

export const FINAL_STATES: readonly RequestState[] = ['finalized', 'failed'];

/** The name the intake goes by: its counter, and its stream (`<prefix>:intake:content`) from api to worker. */
export const INTAKE_SERVICE = 'content';

export function requestStatusStore(redis: Redis, prefix: string, ttlSeconds: number): RequestStatusStore {
  return new RequestStatusStore(redis, { prefix, ttlSeconds, finalStates: FINAL_STATES });
}

/** The request record as GET /v1/requests/{referenceId} shows it. */
export const requestRecordSchema = z
  .object({
    referenceId: z.string(),
    state: z.enum(REQUEST_STATES),
    kind: z
      .enum(['broadcast', 'reply', 'reaction', 'update', 'tombstone', 'profile', 'batch-files', 'on-chain'])
      .meta({ description: 'What was asked for' }),
    msaId: z.string().optional().meta({ description: 'The user the content is from, when there is one' }),
    version: z.number().int().meta({ description: 'Grows with every change' }),
    createdAt: z.string(),
    updatedAt: z.string(),
    batch: z
      .object({ cid: z.string(), schemaId: z.number().int() })
      .optional()
      .meta({ description: 'The Parquet batch file the announcement was written to (state batched and later)' }),
    ...transactionRequestFields,
    history: z.array(z.object({ state: z.enum(REQUEST_STATES), at: z.string() })),
  })
  .meta({ id: 'RequestStatusDto' });
