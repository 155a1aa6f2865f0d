import { createHmac, timingSafeEqual } from 'node:crypto';

// Standard Webhooks: the signed content is "<id>.<timestamp>.<body>", the signature "v1,<base64 HMAC-SHA256>".

const SECRET_PREFIX = 'whsec_';
const VERSION = 'v1';

/** The HMAC key of a secret: the base64 after `whsec_`, or the secret's UTF-8 bytes. */
function signingKey(secret: string): Buffer {
  return secret.startsWith(SECRET_PREFIX)
    ? Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64')
    : Buffer.from(secret, 'utf8');
}

/** The `webhook-signature` value of one delivery attempt: `v1,<base64>`. */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const mac = createHmac('sha256', signingKey(secret)).update(`${id}.${timestamp}.${body}`);
  return `${VERSION},${mac.digest('base64')}`;
}

type IncomingHeaders = Record<string, string | string[] | undefined>;

function header(headers: IncomingHeaders, name: string): string | undefined {
  const key = Object.keys(headers).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : headers[key];
  return Array.isArray(value) ? value.join(' ') : value;
}

/**
 * Whether a received webhook was signed with `secret`: its timestamp is within `toleranceSeconds` of now
 * and one of the space-separated `v1,` signatures matches (compared in constant time).
 */
export function verifyWebhook(secret: string, headers: IncomingHeaders, body: string, toleranceSeconds = 300): boolean {
  const id = header(headers, 'webhook-id');
  const timestampText = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestampText || !signatures || !/^\d+$/.test(timestampText)) return false;
  const timestamp = Number(timestampText);
  if (Math.abs(Date.now() / 1000 - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(signWebhook(secret, id, timestamp, body));
  return signatures.split(' ').some((entry) => {
    const given = Buffer.from(entry);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/** The Standard Webhooks headers of one attempt; `webhook-signature` only when there is a secret. */
export function webhookHeaders(
  secret: string | undefined,
  id: string,
  timestamp: number,
  body: string,
): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    ...(secret === undefined ? {} : { 'webhook-signature': signWebhook(secret, id, timestamp, body) }),
  };
}
