import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { bindEmitter, contextFrom, recordFailure, SpanKind, startSpan, withContext } from '../tracing/index.js';
import { QUIET_PATHS } from './requestContext.js';

/**
 * Makes each request a server span, child of the caller's `traceparent` when it sends one, and active for
 * everything the request does (its body read, its handler, what they queue). Named by the route template
 * once matched, so that spans group by route as the latency metric does. Probes and scrapes are left out.
 * It runs before requestContext, whose access line is then written inside the span (with its trace id).
 */
export function traceRequests(): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    if (QUIET_PATHS.has(req.path)) return next();
    const { span, context } = startSpan(`${req.method}`, {
      kind: SpanKind.SERVER,
      parent: contextFrom(req.headers),
      attributes: { 'http.request.method': req.method, 'url.path': req.path },
    });
    // The body arrives in events of the connection, which began before the span: they are bound to it.
    bindEmitter(context, req);
    bindEmitter(context, res);
    res.once('close', () => {
      // Given by requestContext, which runs after this.
      span.setAttribute('gateway.request_id', req.id);
      const route = res.locals.routeTemplate;
      if (route !== undefined) {
        span.updateName(`${req.method} ${route}`);
        span.setAttribute('http.route', route);
      }
      const status = res.writableFinished ? res.statusCode : 499;
      span.setAttribute('http.response.status_code', status);
      if (status >= 500) recordFailure(span, res.locals.errorCause ?? new Error(`answered ${status}`));
      span.end();
    });
    withContext(context, next);
  };
}
