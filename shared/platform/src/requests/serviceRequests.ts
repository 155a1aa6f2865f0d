import type { RedisClient } from '../redis/connection.js';
import { z } from 'zod';
import { RequestStatusStore } from './requestStatusStore.js';

/** Where every service's requests end: on chain, or refused. */
export const FINAL_REQUEST_STATES = ['finalized', 'failed'] as const;

export interface ServiceRequestsOptions<
  State extends string,
  Fields extends z.ZodRawShape,
  OutcomeFields extends z.ZodRawShape,
> {
  /** The intake's name: its counter (`<intake>_requests_accepted_total`) and stream (`<prefix>:intake:<intake>`). */
  intake: string;
  /** The states a request goes through, in order, `queued` first and the final states among them. */
  states: readonly [State, ...State[]];
  /** The OpenAPI id of the record's schema. */
  recordId: string;
  /** The fields of this service's records between the state and the version. */
  fields: Fields;
  /** The fields that say how a request ended (a chain transaction's, for the services that submit), after the times. */
  outcomeFields: OutcomeFields;
}

/**
 * What a service's api and worker agree on about its requests: their states, the intake that carries them from
 * the one to the other, the store of their records, and the record as GET /v1/requests/{referenceId} shows it
 * (referenceId, state, the service's fields, version, times, the outcome's fields, history).
 */
export function serviceRequests<
  const State extends string,
  Fields extends z.ZodRawShape,
  OutcomeFields extends z.ZodRawShape,
>(options: ServiceRequestsOptions<State, Fields, OutcomeFields>) {
  const { intake, states, recordId, fields, outcomeFields } = options;
  const missing = ['queued', ...FINAL_REQUEST_STATES].filter((state) => !(states as readonly string[]).includes(state));
  if (missing.length > 0) throw new Error(`the request states of ${intake} lack ${missing.join(', ')}`);
  const state = z.enum(states);
  return {
    intake,
    states,
    store: (redis: RedisClient, prefix: string, ttlSeconds: number) =>
      new RequestStatusStore(redis, { prefix, ttlSeconds, finalStates: FINAL_REQUEST_STATES }),
    recordSchema: z
      .object({
        referenceId: z.string(),
        state,
        ...fields,
        version: z.number().int().meta({ description: 'Grows with every change' }),
        createdAt: z.string(),
        updatedAt: z.string(),
        ...outcomeFields,
        history: z.array(z.object({ state, at: z.string() })),
      })
      .meta({ id: recordId }),
  };
}
