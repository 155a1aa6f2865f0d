import { z } from 'zod';

/**
 * Why a request failed. A chain error names the pallet (`module`) and the error (`name`), with the pallet's
 * index in the runtime (`index`) and the error's position in that pallet's errors (`code`).
 */
export const requestErrorSchema = z
  .object({
    message: z.string(),
    module: z.string().optional().meta({ description: 'Chain errors: the pallet, e.g. Handles' }),
    name: z.string().optional().meta({ description: 'Chain errors: the error, e.g. MSAHandleAlreadyExists' }),
    index: z
      .number()
      .int()
      .optional()
      .meta({ description: "Chain errors: the pallet's index in the runtime, e.g. 66" }),
    code: z.number().int().optional().meta({ description: "Chain errors: the error's index in the pallet, e.g. 9" }),
  })
  .meta({ id: 'RequestError' });

/**
 * The request-record fields of a request that ends in a chain transaction (GET /v1/requests/{referenceId} of
 * the services that submit): the transaction, its block, or its error.
 */
export const transactionRequestFields = {
  transaction: z
    .object({ hash: z.string() })
    .optional()
    .meta({ description: 'The capacity-paid transaction that carries it (submitted and later)' }),
  block: z
    .object({ number: z.number().int(), hash: z.string() })
    .optional()
    .meta({ description: 'The finalized block that includes it' }),
  error: requestErrorSchema
    .optional()
    .meta({ description: 'Why it failed (state failed); chain errors carry the pallet and error, names and numbers' }),
};
