import { z } from 'zod';

/** The record fields of a request that ends in a chain transaction: the transaction, its block, or its error. */
export const transactionRequestFields = {
  transaction: z
    .object({ hash: z.string() })
    .optional()
    .meta({ description: 'The capacity-paid transaction that carries it (submitted and later)' }),
  block: z
    .object({ number: z.number().int(), hash: z.string() })
    .optional()
    .meta({ description: 'The finalized block that includes it' }),
  error: z
    .object({ message: z.string(), module: z.string().optional(), name: z.string().optional() })
    .optional()
    .meta({ description: 'Why it failed (state failed); chain errors carry the pallet and error name' }),
};
