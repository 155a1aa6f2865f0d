import { randomUUID } from 'node:crypto';
import type { Express, NextFunction, Request, RequestHandler, Response } from 'express';
import type { Histogram } from 'prom-client';
import type { Logger } from '../logging/index.js';

const ACCEPTABLE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Requests that probes and scrapers make every few seconds; logged at debug, whatever their status, so they do not drown the rest. */
export const QUIET_PATHS = new Set(['/livez', '/readyz', '/healthz', '/metrics']);

declare module 'express-serve-static-core' {
  interface Request {
    id: string;
    log: Logger;
  }
  interface Locals {
    /** The route template that matched (OpenAPI style), for metrics and logs. */
    routeTemplate?: string;
  }
}

/**
 * Gives each request an id (the caller's `x-request-id` when it is sane, else a new UUID), echoes it on the
 * response, offers a child logger carrying the id as `req.log`, and on completion records the access log line
 * and the latency histogram under the route template rather than the raw path.
 *
 * `req.log` is made on first use (a getter on the app's request prototype): most requests never log through
 * it, and the access line names the request id itself.
 */
export function requestContext(
  app: Express,
  logger: Logger,
  duration: Histogram<'method' | 'route' | 'status'>,
): RequestHandler {
  Object.defineProperty(app.request, 'log', {
    configurable: true,
    get(this: Request): Logger {
      const log = logger.child({ requestId: this.id });
      Object.defineProperty(this, 'log', { value: log, configurable: true });
      return log;
    },
  });
  return (req: Request, res: Response, next: NextFunction) => {
    const incoming = req.get('x-request-id');
    const id = incoming && ACCEPTABLE_ID.test(incoming) ? incoming : randomUUID();
    req.id = id;
    res.setHeader('x-request-id', id);
    const started = process.hrtime.bigint();
    res.once('close', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = res.locals.routeTemplate ?? 'unmatched';
      const status = res.writableFinished ? res.statusCode : 499;
      duration.observe({ method: req.method, route, status: String(status) }, seconds);
      const { errorReference, errorCause, tokenName } = res.locals;
      const line = {
        requestId: id,
        method: req.method,
        path: req.path,
        route,
        status,
        durationMs: Math.round(seconds * 1000),
        ...(tokenName !== undefined ? { client: tokenName } : {}),
        ...(errorReference !== undefined ? { errorReference } : {}),
      };
      // A failure answered with the error envelope is told here, once: its reference, its cause and its route.
      if (status >= 500 && errorReference !== undefined) logger.error({ ...line, err: errorCause }, 'request failed');
      // A probe's 503 is the answer it asks for; the readiness controller logs each dependency change once.
      else if (QUIET_PATHS.has(req.path)) logger.debug(line, 'request');
      else if (status >= 500) logger.error(line, 'request failed');
      // A client over its limit is told once per window by the rate limiter, not once per refused request.
      else if (status === 429) logger.debug(line, 'request rate limited');
      else if (status >= 400) logger.warn(line, 'request rejected');
      else logger.info(line, 'request');
    });
    next();
  };
}
