import { z } from 'zod';
import { positiveMs, variable } from '../config/index.js';

/** The request status variables, the same for an api (which creates records) and its worker (which moves them). */
export function requestStatusVariables() {
  return {
    REQUEST_STATUS_TTL_SECONDS: variable(
      z.coerce
        .number()
        .int()
        .positive()
        .default(30 * 24 * 3600),
      'How long GET /v1/requests/{referenceId} remembers a request after its last change',
    ),
  };
}

/** Variables of an api that accepts requests through an Intake: how durable an acknowledged request is. */
export function intakeVariables() {
  return {
    REDIS_DURABILITY: variable(
      z.enum(['acknowledged', 'replicated']).default('acknowledged'),
      '`acknowledged`: a request is answered (202) once the Redis primary has it. `replicated`: only once at least one replica has it too (WAIT), so that no answered request is lost when the primary dies; when no replica confirms within REDIS_DURABILITY_TIMEOUT_MS the answer is 503 (the same request again is safe). Costs a replication round trip per turn of requests',
    ),
    REDIS_DURABILITY_TIMEOUT_MS: variable(
      positiveMs(1_000),
      'With REDIS_DURABILITY=replicated, how long a request waits for a replica before it is answered 503',
    ),
  };
}
