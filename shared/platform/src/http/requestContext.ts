import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Histogram } from 'prom-client';
import type { Logger } from '../logging/index.js';

const ACCEPTABLE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Requests that probes and scrapers make every few seconds; logged at debug, whatever their status, so they do not drown the rest. */
const QUIET_PATHS = new Set(['/livez', '/readyz', '/healthz', '/metrics']);

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
 * response, hangs a child logger on the request, and on completion records the access log line and the
 * latency histogram under the route template rather than the raw path.
 */
export function requestContext(logger: Logger, duration: Histogram<'method' | 'route' | 'status'>): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const incoming = req.get('x-request-id');
    req.id = incoming && ACCEPTABLE_ID.test(incoming) ? incoming : randomUUID();
    req.log = logger.child({ requestId: req.id });
    res.setHeader('x-request-id', req.id);
    const started = process.hrtime.bigint();
    res.once('close', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = res.locals.routeTemplate ?? 'unmatched';
      const status = res.writableFinished ? res.statusCode : 499;
      duration.observe({ method: req.method, route, status: String(status) }, seconds);
      const line = { method: req.method, path: req.path, route, status, durationMs: Math.round(seconds * 1000) };
      // A probe's 503 is the answer it asks for; the readiness controller logs each dependency change once.
      if (QUIET_PATHS.has(req.path)) req.log.debug(line, 'request');
      else if (status >= 500) req.log.error(line, 'request failed');
      else if (status >= 400) req.log.warn(line, 'request rejected');
      else req.log.info(line, 'request');
    });
    next();
  };
}
