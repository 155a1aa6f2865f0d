import { OutboundRefusal, postOutbound, type OutboundAnswer, type OutboundPolicy } from '@frequency-gateway/platform';
import { parseRetryAfter } from './retryDelay.js';

/** Where a webhook goes: the URL without userinfo, its host (safe to log) and the Basic credentials it carried. */
export interface ReceiverTarget {
  url: string;
  host: string;
  authorization?: string;
}

/** `user:pass@` becomes an authorization header, so that the URL the request goes to carries no credential. */
export function receiverTarget(url: string): ReceiverTarget {
  const parsed = new URL(url);
  const host = parsed.host;
  if (parsed.username === '' && parsed.password === '') return { url: parsed.href, host };
  const credentials = `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`;
  parsed.username = '';
  parsed.password = '';
  return { url: parsed.href, host, authorization: `Basic ${Buffer.from(credentials).toString('base64')}` };
}

/**
 * A failed attempt. Its message names no URL and no credential, so it can be logged and kept on the job.
 * `refused` says the outbound policy refused the destination: no request was sent, and none will be.
 */
export class AttemptFailure extends Error {
  constructor(
    message: string,
    readonly status?: number,
    /** The receiver's Retry-After (429 and 503 only), in milliseconds. */
    readonly retryAfterMs?: number,
    readonly refused = false,
  ) {
    super(message);
    this.name = 'AttemptFailure';
  }
}

const RETRY_AFTER_STATUSES = new Set([429, 503]);

/** A property of a thrown value; fetch's errors may come from another realm, so `instanceof Error` is not used. */
function field(value: unknown, name: 'name' | 'message' | 'cause'): unknown {
  return typeof value === 'object' && value !== null && name in value
    ? (value as Record<string, unknown>)[name]
    : undefined;
}

function networkProblem(error: unknown, timeoutMs: number): string {
  if (field(error, 'name') === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  const detail = field(field(error, 'cause'), 'message') ?? field(error, 'message') ?? error;
  return `no answer: ${String(detail)}`;
}

/**
 * POSTs one attempt to a destination the outbound policy allows (checked again now, after resolving its name,
 * and connected to at the address checked); resolves with the 2xx status, or rejects with an AttemptFailure.
 * Redirects are not followed: a 3xx is a failure like any other status.
 */
export async function postToReceiver(
  policy: OutboundPolicy,
  target: ReceiverTarget,
  payload: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<number> {
  let response: OutboundAnswer;
  try {
    response = await postOutbound(policy, target.url, {
      headers: { ...headers, ...(target.authorization ? { authorization: target.authorization } : {}) },
      body: payload,
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    if (error instanceof OutboundRefusal)
      throw new AttemptFailure(`destination refused: ${error.message}`, undefined, undefined, true);
    throw new AttemptFailure(networkProblem(error, timeoutMs));
  }
  if (response.status >= 200 && response.status < 300) return response.status;
  const retryAfter = response.headers['retry-after'];
  const retryAfterMs = RETRY_AFTER_STATUSES.has(response.status)
    ? parseRetryAfter(typeof retryAfter === 'string' ? retryAfter : null)
    : undefined;
  throw new AttemptFailure(`receiver answered ${response.status}`, response.status, retryAfterMs);
}
