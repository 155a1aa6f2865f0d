import { z } from 'zod';
import { variable } from '../config/index.js';
import { durabilityVariables } from '../component/variables.js';

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
  return durabilityVariables();
}
