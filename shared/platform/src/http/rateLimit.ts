import type { RequestHandler } from 'express';
import { Counter, type Registry } from 'prom-client';
import type { Logger } from '../logging/index.js';
import { HttpError } from './errors.js';

/** A counter of requests per client and window, shared by every replica (see RedisRateWindow). */
export interface RateWindow {
  /** Counts one request of `client`; answers the count in its current window and the time until that window ends. */
  hit(client: string, windowMs: number): Promise<{ count: number; resetInMs: number }>;
}

export interface RateLimitOptions {
  /** Requests a client may make per minute (more than 0). */
  perMinute: number;
  window: RateWindow;
  logger: Logger;
  metrics: Registry;
  /** Paths never limited (health and metrics). */
  exempt: ReadonlySet<string>;
  /** A count that takes longer than this lets the request through (see below). */
  timeoutMs?: number;
}

const WINDOW_MS = 60_000;

/**
 * At most `perMinute` requests per client in a fixed window of a minute that starts with the client's first
 * request, counted in Redis so that every replica counts against the same limit. A client is the name of its
 * API token when it sent a valid one (see identifyClient), else its address (`req.ip`: the socket's peer, or the
 * address in X-Forwarded-For when HTTP_TRUST_PROXY says which proxies to believe). Over the limit: 429 with
 * `Retry-After` (seconds until the window ends) and the error envelope.
 *
 * It fails open: when Redis does not answer within `timeoutMs` the request goes through, uncounted. The limit
 * protects the gateway from one client crowding out the others; while Redis is away, every route that needs
 * it answers 503 anyway and the rest (chain look-ups) are better served to everyone than refused to everyone.
 * That stretch is logged when it starts and when it ends, and counted in `http_rate_limit_unchecked_total`.
 */
export function rateLimit(options: RateLimitOptions): RequestHandler {
  const { perMinute, window, logger, exempt } = options;
  const timeoutMs = options.timeoutMs ?? 500;
  const registers = [options.metrics];
  const limited = new Counter({
    name: 'http_rate_limited_total',
    help: 'Requests refused with 429 because their client was over RATE_LIMIT_PER_MINUTE',
    registers,
  });
  const unchecked = new Counter({
    name: 'http_rate_limit_unchecked_total',
    help: 'Requests let through without counting because Redis did not answer the rate limiter',
    registers,
  });
  let failing = false;

  const count = (client: string) =>
    new Promise<{ count: number; resetInMs: number }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      window.hit(client, WINDOW_MS).then(
        (answer) => (clearTimeout(timer), resolve(answer)),
        (error: unknown) => (clearTimeout(timer), reject(error)),
      );
    });

  return async (req, res, next) => {
    if (exempt.has(req.path)) return next();
    const client = res.locals.tokenName !== undefined ? `token:${res.locals.tokenName}` : `address:${req.ip ?? ''}`;
    let answer;
    try {
      answer = await count(client);
    } catch (error) {
      unchecked.inc();
      if (!failing) logger.warn({ err: error }, 'rate limit not applied while Redis does not answer: requests pass');
      failing = true;
      return next();
    }
    if (failing) logger.info('rate limit applied again');
    failing = false;
    if (answer.count <= perMinute) return next();
    limited.inc();
    // One line per client and window, not one per refused request.
    if (answer.count === perMinute + 1)
      logger.warn(
        { client, limitPerMinute: perMinute },
        'client over its rate limit: answering 429 until its window ends',
      );
    const retryAfter = Math.max(1, Math.ceil(answer.resetInMs / 1000));
    next(
      new HttpError(429, `rate limit: at most ${perMinute} requests a minute per client; retry after ${retryAfter} s`, {
        'retry-after': String(retryAfter),
      }),
    );
  };
}
