import { transactionRequestFields } from '@frequency-gateway/chain';
import { RequestStatusStore } from '@frequency-gateway/platform';
import { TRANSACTION_TYPES } from './jobs.js';
import type { Redis } from 'ioredis';
import { z } from 'zod';

/** The states of an account request: queued → submitted → finalized, or failed at any point. */
export const REQUEST_STATES = ['queued', 'submitted', 'finalized', 'failed'] as const;
export type RequestState = (typeof REQUEST_STATES)[number];

export const FINAL_STATES: readonly RequestState[] = ['finalized', 'failed'];

/** The name the intake goes by: its counter, and its stream (`<prefix>:intake:account`) from api to worker. */
export const INTAKE_SERVICE = 'account';

export function requestStatusStore(redis: Redis, prefix: string, ttlSeconds: number): RequestStatusStore {
  return new RequestStatusStore(redis, { prefix, ttlSeconds, finalStates: FINAL_STATES });
}

/** The request record as GET /v1/requests/{referenceId} shows it. */
export const requestRecordSchema = z
  .object({
    referenceId: z.string(),
    state: z.enum(REQUEST_STATES),
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
    version: z.number().int().meta({ description: 'Grows with every change' }),
    createdAt: z.string(),
    updatedAt: z.string(),
    ...transactionRequestFields,
    history: z.array(z.object({ state: z.enum(REQUEST_STATES), at: z.string() })),
  })
  .meta({ id: 'AccountRequestStatusDto' });
