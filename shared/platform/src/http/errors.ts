import { randomBytes } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import { z } from 'zod';

/** An error that becomes an HTTP answer as it is: status, message and (for 400) every field problem. */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly messages: string | readonly string[],
    readonly headers: Readonly<Record<string, string>> = {},
    /** What led to it (a 503's failing dependency, say): logged with the error, never sent. */
    options?: ErrorOptions,
  ) {
    super(Array.isArray(messages) ? messages.join('; ') : String(messages), options);
    this.name = 'HttpError';
  }
}

const list = (messages: string | readonly string[]) => (typeof messages === 'string' ? [messages] : messages);

/** 400 with one entry per problem, each naming its field (`body.content.published: ...`). */
export const badRequest = (messages: string | readonly string[]) => new HttpError(400, list(messages));
export const forbidden = (message: string) => new HttpError(403, message);
export const notFound = (message: string) => new HttpError(404, message);
export const conflict = (message: string) => new HttpError(409, message);
export const unprocessable = (messages: string | readonly string[]) => new HttpError(422, list(messages));
export const serviceUnavailable = (message: string, cause?: unknown) =>
  new HttpError(503, message, {}, cause === undefined ? undefined : { cause });

/** The body of every error response. */
export interface ErrorEnvelope {
  statusCode: number;
  message: string | readonly string[];
  error: string;
  errorReference: string;
}

/** The error envelope as the OpenAPI document describes it. */
export const errorEnvelopeSchema = z
  .object({
    statusCode: z.number().int(),
    message: z
      .union([z.string(), z.array(z.string())])
      .meta({ description: 'What went wrong; for a 400, one `location.field: problem` entry per problem' }),
    error: z.string().meta({ description: 'The HTTP reason phrase' }),
    errorReference: z
      .string()
      .meta({ description: 'Names this answer in the logs: the log line of a 5xx carries it with its cause' }),
  })
  .meta({ id: 'ErrorResponse' });

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A random 20-character id that ties an error response to its log line. */
export function newErrorReference(): string {
  return Array.from(randomBytes(20), (byte) => ALPHABET[byte % ALPHABET.length]).join('');
}

export function errorEnvelope(statusCode: number, message: string | readonly string[]): ErrorEnvelope {
  return { statusCode, message, error: STATUS_CODES[statusCode] ?? 'Error', errorReference: newErrorReference() };
}
