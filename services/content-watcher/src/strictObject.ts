import { z } from 'zod';

/**
 * An object schema that refuses fields it does not know, naming them and the fields it has: a control request
 * with a misspelt field (`msaIds` for `dsnpIds`) must fail rather than act as if the field were unset.
 */
export function strictObject<Shape extends z.ZodRawShape>(shape: Shape) {
  const known = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((key) => `"${key}"`).join(', ')} (the fields are ${known})`
        : undefined,
  });
}
