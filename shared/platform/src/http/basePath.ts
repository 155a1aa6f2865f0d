import type { RequestHandler, Response } from 'express';

declare module 'express-serve-static-core' {
  interface Locals {
    /** The path prefix (HTTP_BASE_PATH) the request came through; absent when it came without one. */
    basePath?: string;
  }
}

/**
 * Serves every route under `basePath` as well as without it, for an Ingress that routes by path prefix and
 * does not rewrite: `<basePath>/anything` is handled as `/anything`. The prefix is taken off `req.url` before
 * anything else sees the request, so routing, metrics and the access log know only the plain path, while
 * `req.originalUrl` keeps it (redirects built from it, such as the static files' trailing slash, stay under
 * the prefix). Pages that link to themselves ask `externalPath` for what the browser must use.
 */
export function servePathPrefix(basePath: string): RequestHandler {
  return (req, res, next) => {
    const url = req.url;
    const rest = url.slice(basePath.length);
    if (url.startsWith(basePath) && (rest === '' || rest.startsWith('/') || rest.startsWith('?'))) {
      req.url = rest.startsWith('/') ? rest : `/${rest}`;
      res.locals.basePath = basePath;
    }
    next();
  };
}

/** `path` as the browser must ask for it: under the prefix the current request came through, if any. */
export function externalPath(res: Response, path: string): string {
  return `${res.locals.basePath ?? ''}${path}`;
}
