import { secret, variable, type ConfigOf } from '@frequency-gateway/platform';
import { z } from 'zod';

const wholeNumber = (min: number, max: number, fallback: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

const signingSecret = z
  .string()
  .min(16)
  .refine((value) => !value.startsWith('whsec_') || /^[A-Za-z0-9+/]+={0,2}$/.test(value.slice(6)), {
    error: 'after whsec_ must come base64',
  })
  .optional();

/** The webhook delivery variables of every component that sends or delivers webhooks. */
export function webhookVariables() {
  return {
    WEBHOOK_SECRET: secret(
      signingSecret,
      'HMAC-SHA256 key that signs every webhook (Standard Webhooks headers); `whsec_` + base64 is decoded, anything else is used as UTF-8. Unset: deliveries are not signed',
    ),
    WEBHOOK_BEARER_TOKEN: secret(
      z
        .string()
        .regex(/^[A-Za-z0-9\-._~+/]+=*$/, 'must be a bearer token (RFC 6750: A-Z a-z 0-9 - . _ ~ + / then any =)')
        .optional(),
      "Sent as `Authorization: Bearer <token>` with every webhook, for a receiver that checks it (the reference gateway's PROVIDER_ACCESS_TOKEN). Credentials in a webhook URL (user:password@) take its place for that URL. Unset: no Authorization header",
    ),
    WEBHOOK_MAX_ATTEMPTS: variable(
      wholeNumber(1, 100, 12),
      'Attempts per webhook before it is left in the failed (dead-letter) set of its queue',
    ),
    WEBHOOK_RETRY_BASE_MS: variable(
      wholeNumber(100, Number.MAX_SAFE_INTEGER, 1000),
      'Delay before the first retry of a webhook; doubled at each further attempt (±10 % jitter)',
    ),
    WEBHOOK_RETRY_MAX_MS: variable(
      wholeNumber(100, Number.MAX_SAFE_INTEGER, 600_000),
      'Longest delay between two attempts of a webhook, also the cap of a receiver-sent Retry-After',
    ),
    WEBHOOK_TIMEOUT_MS: variable(
      wholeNumber(100, Number.MAX_SAFE_INTEGER, 10_000),
      'Time a receiver has to answer one webhook attempt',
    ),
    WEBHOOK_CONCURRENCY: variable(wholeNumber(1, 500, 20), 'Webhooks sent at the same time by one worker process'),
  };
}

export type WebhookConfig = ConfigOf<ReturnType<typeof webhookVariables>>;

export interface WebhookSettings {
  /** HMAC key; when set every delivery is signed. */
  secret?: string;
  maxAttempts: number;
  /** First retry delay, doubled each attempt. */
  retryBaseMs: number;
  /** Cap of the retry delay (and of a receiver's Retry-After). */
  retryMaxMs: number;
  /** Per attempt. */
  timeoutMs: number;
  concurrency: number;
  /** Sent with every delivery (after the content type, before the webhook-* headers). */
  headers?: Record<string, string>;
}

export function webhookSettings(config: WebhookConfig): WebhookSettings {
  return {
    ...(config.WEBHOOK_SECRET === undefined ? {} : { secret: config.WEBHOOK_SECRET }),
    maxAttempts: config.WEBHOOK_MAX_ATTEMPTS,
    retryBaseMs: config.WEBHOOK_RETRY_BASE_MS,
    retryMaxMs: config.WEBHOOK_RETRY_MAX_MS,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    concurrency: config.WEBHOOK_CONCURRENCY,
    ...(config.WEBHOOK_BEARER_TOKEN === undefined
      ? {}
      : { headers: { authorization: `Bearer ${config.WEBHOOK_BEARER_TOKEN}` } }),
  };
}
