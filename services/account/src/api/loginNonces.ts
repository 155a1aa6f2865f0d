import { createHash } from 'node:crypto';
import { badRequest, HttpError, serviceUnavailable, type Logger } from '@frequency-gateway/platform';
import type { RedisClient } from '@frequency-gateway/platform';

/** The lines of a CAIP-122 login message that make it single-use: its nonce and when it stops being valid. */
export interface LoginMessageTerms {
  nonce: string;
  expiresAt: Date;
}

/** Reads the Nonce and Expiration Time lines of a login message (its signature and URI are the library's checks). */
export function loginMessageTerms(message: string, field: string): LoginMessageTerms {
  const line = (name: string) =>
    message
      .split('\n')
      .find((text) => text.startsWith(`${name}: `))
      ?.slice(name.length + 2)
      .trim();
  const nonce = line('Nonce');
  const expiration = line('Expiration Time');
  const problems: string[] = [];
  if (!nonce) problems.push(`${field}: the login message has no Nonce line`);
  const expiresAt = expiration === undefined ? undefined : new Date(expiration);
  // Without an end, the nonce would have to be remembered for ever to keep the message single-use.
  if (expiration === undefined)
    problems.push(
      `${field}: the login message has no Expiration Time line (a login is accepted once, until it expires)`,
    );
  else if (Number.isNaN(expiresAt?.getTime()))
    problems.push(`${field}: the login message's Expiration Time is not a date: ${JSON.stringify(expiration)}`);
  if (problems.length > 0) throw badRequest(problems);
  return { nonce: nonce as string, expiresAt: expiresAt as Date };
}

/** What a login message was used for: a plain login, or one sign-up (named by what makes it the same sign-up). */
export type LoginUse = { kind: 'login' } | { kind: 'sign-up'; identity: readonly string[] };

const useValue = (use: LoginUse) =>
  use.kind === 'login'
    ? 'login'
    : `sign-up:${createHash('sha256').update(JSON.stringify(use.identity)).digest('base64url')}`;

/**
 * Login messages accepted once. The first use of a user's nonce is written with `SET NX`, kept until the message
 * expires (after that the library refuses the message anyway); any other use of it is refused with 401. The same
 * sign-up posted again is that same use, so it stays idempotent (the same referenceId, nothing queued twice),
 * while its login message can never serve as a plain login. Shared by every api replica through Redis.
 */
export class LoginNonces {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly logger: Logger,
  ) {}

  private key(accountId: string, nonce: string): string {
    const digest = createHash('sha256').update(`${accountId.toLowerCase()}\n${nonce}`).digest('base64url');
    return `${this.prefix}:siwf:login-nonce:${digest}`;
  }

  /** Records this use of the message, or throws 401 when the message was used before for something else. */
  async use(accountId: string, terms: LoginMessageTerms, use: LoginUse, field: string): Promise<void> {
    const key = this.key(accountId, terms.nonce);
    const value = useValue(use);
    const ttlMs = Math.max(1, terms.expiresAt.getTime() - Date.now());
    let earlier: string | null;
    try {
      const written = await this.redis.set(key, value, 'PX', ttlMs, 'NX');
      if (written === 'OK') return;
      earlier = await this.redis.get(key);
    } catch (error) {
      // Unchecked, the sign-in is refused: accepting it could accept a replay.
      this.logger.warn({ err: error }, 'could not record the use of a login message');
      throw serviceUnavailable('The login message could not be checked for reuse (Redis is not reachable); try again');
    }
    if (use.kind === 'sign-up' && earlier === value) return;
    throw new HttpError(
      401,
      `${field}: this login message was used before (each is accepted once); the user signs in again for a new one`,
    );
  }
}
