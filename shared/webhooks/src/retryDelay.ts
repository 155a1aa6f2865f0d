import type { WebhookSettings } from './config.js';

const JITTER = 0.1;

/**
 * How long to wait after failed attempt number `attempt` (1 for the first): the receiver's Retry-After when
 * it sent one, else `retryBaseMs * 2^(attempt-1)` with ±10 % jitter; never more than `retryMaxMs`.
 */
export function retryDelay(
  attempt: number,
  settings: Pick<WebhookSettings, 'retryBaseMs' | 'retryMaxMs'>,
  retryAfterMs?: number,
  random: () => number = Math.random,
): number {
  if (retryAfterMs !== undefined) return Math.min(settings.retryMaxMs, retryAfterMs);
  const exponential = Math.min(settings.retryMaxMs, settings.retryBaseMs * 2 ** (attempt - 1));
  const jittered = exponential * (1 + JITTER * (2 * random() - 1));
  return Math.round(Math.min(settings.retryMaxMs, jittered));
}

/** A Retry-After value (delay in seconds, or an HTTP date) in milliseconds from `now`. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
