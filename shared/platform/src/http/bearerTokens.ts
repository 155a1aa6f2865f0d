import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { z } from 'zod';
import { HttpError } from './errors.js';
import type { Route } from './route.js';

declare module 'express-serve-static-core' {
  interface Locals {
    /** The name of the API token the request carried, when it carried a valid one. */
    tokenName?: string;
  }
}

/** A client's token (API_TOKENS): the name that logs and rate limits use, and the secret it sends. */
export interface ApiToken {
  name: string;
  token: string;
}

const NAME = /^[A-Za-z0-9._-]{1,64}$/;
/** Characters a bearer token may have (RFC 6750 b64token), at least 16 of them. */
const TOKEN = /^[A-Za-z0-9\-._~+/]{16,}=*$/;

/**
 * `name:token,name:token` (API_TOKENS): every problem at once, naming the entry by position, never quoting a token.
 * Names and tokens are unique, so that a log line names one client and a token belongs to one.
 */
export const apiTokensSchema = () =>
  z
    .string()
    .transform((text, context) => {
      const entries = text
        .split(',')
        .map((entry) => entry.trim())
        .filter((entry) => entry !== '');
      const tokens: ApiToken[] = [];
      entries.forEach((entry, index) => {
        const colon = entry.indexOf(':');
        const name = colon > 0 ? entry.slice(0, colon) : '';
        const token = colon > 0 ? entry.slice(colon + 1) : '';
        const at = `entry ${index + 1}`;
        if (!NAME.test(name))
          context.addIssue({
            code: 'custom',
            message: `${at}: must be name:token, the name of letters, digits, . _ -`,
          });
        else if (!TOKEN.test(token))
          context.addIssue({
            code: 'custom',
            message: `${at} (${name}): the token must be 16 or more of A-Z a-z 0-9 - . _ ~ + /`,
          });
        else tokens.push({ name, token });
      });
      const names = tokens.map((t) => t.name);
      for (const name of new Set(names.filter((n, i) => names.indexOf(n) !== i)))
        context.addIssue({ code: 'custom', message: `${name}: the name is given twice` });
      if (new Set(tokens.map((t) => t.token)).size !== tokens.length)
        context.addIssue({ code: 'custom', message: 'two entries have the same token' });
      return tokens;
    })
    .optional();

export interface BearerPolicy {
  tokens: readonly ApiToken[];
  /** GET look-ups need a token as well (else only writes and controls do). */
  protectReads: boolean;
}

/** Who may call a route, by its declaration: `open` routes never need a token; `read` ones only when reads are protected. */
export function requiresToken(route: Pick<Route, 'method' | 'access'>, policy: { protectReads: boolean }): boolean {
  const access = route.access ?? (route.method === 'get' ? 'read' : 'write');
  return access === 'write' || (access === 'read' && policy.protectReads);
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * Notes which client a request comes from (`res.locals.tokenName`) when it carries `Authorization: Bearer` with
 * a known token, for the logs and the rate limit; it refuses nothing (see requireToken). Every known token is
 * compared, each in constant time over its SHA-256, so the time taken says nothing about which one nearly matched.
 */
export function identifyClient(policy: BearerPolicy): RequestHandler {
  const known = policy.tokens.map(({ name, token }) => ({ name, digest: digest(token) }));
  return (req, res, next) => {
    const given = bearerToken(req.get('authorization'));
    if (given !== undefined) {
      const candidate = digest(given);
      let name: string | undefined;
      for (const entry of known) if (timingSafeEqual(entry.digest, candidate)) name ??= entry.name;
      if (name !== undefined) res.locals.tokenName = name;
    }
    next();
  };
}

function bearerToken(header: string | undefined): string | undefined {
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1];
}

/** 401 with `WWW-Authenticate: Bearer` unless identifyClient recognised the request's token. */
export const requireToken: RequestHandler = (req, res, next) => {
  if (res.locals.tokenName !== undefined) return next();
  const given = bearerToken(req.get('authorization')) !== undefined;
  next(
    new HttpError(
      401,
      given
        ? 'Authorization: the bearer token is not valid'
        : 'Authorization: a bearer token is required (Authorization: Bearer <token>)',
      { 'www-authenticate': given ? 'Bearer realm="api", error="invalid_token"' : 'Bearer realm="api"' },
    ),
  );
};
