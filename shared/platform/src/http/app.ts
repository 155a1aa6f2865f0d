import express, { type ErrorRequestHandler, type Express, type RequestHandler, type Response } from 'express';
import helmet from 'helmet';
import swaggerUi from 'swagger-ui-express';
import type { Registry } from 'prom-client';
import type { Logger } from '../logging/index.js';
import { createHttpDurationHistogram } from '../metrics/index.js';
import { servePathPrefix } from './basePath.js';
import { identifyClient, requireToken, requiresToken, type BearerPolicy } from './bearerTokens.js';
import { errorEnvelope, HttpError } from './errors.js';
import { buildOpenApiDocument, type ApiInfo, type OpenApiDocument, type WebhookSpec } from './openapi.js';
import { rateLimit, type RateWindow } from './rateLimit.js';
import { requestContext } from './requestContext.js';
import { traceRequests } from './requestSpans.js';
import { expressPath, type Route } from './route.js';
import type { TrustProxy } from './trustProxy.js';
import { validateInput } from './validation.js';

/** A sub-application mounted under a path, such as the queue board. */
export interface Mount {
  path: string;
  handlers: RequestHandler[];
  /** The default content security policy breaks some bundled UIs; they opt out here. */
  contentSecurityPolicy?: boolean;
}

export interface HttpAppOptions {
  logger: Logger;
  metrics: Registry;
  info: ApiInfo;
  routes: readonly Route[];
  /** Requests the service sends to its callers, published under `webhooks` in the OpenAPI document. */
  webhooks?: readonly WebhookSpec[];
  mounts?: readonly Mount[];
  /** Largest accepted JSON body, in the `bytes` notation (e.g. `1mb`). */
  jsonLimit?: string;
  /** A path prefix (`/account`) under which every route is served as well (see servePathPrefix). */
  basePath?: string;
  /** API tokens (API_TOKENS): the routes that need one answer 401 without it. Absent: no route needs one. */
  bearer?: BearerPolicy;
  /** At most `perMinute` requests per client, counted in `window` (RATE_LIMIT_PER_MINUTE). Absent: no limit. */
  rateLimit?: { perMinute: number; window: RateWindow };
  /** Whose X-Forwarded-For names the client (HTTP_TRUST_PROXY); nobody's by default. */
  trustProxy?: TrustProxy;
  /**
   * When an error means a dependency the request needed is unusable (Redis refused the credentials, say): the
   * 503's message and the cause to log (the error that says why); undefined for any other error, a 500.
   */
  dependencyFailure?: (error: unknown) => { message: string; cause: unknown } | undefined;
  /** Tracing is on: each request (but probes and scrapes) is a server span, the parent of what it causes. */
  tracing?: boolean;
}

export interface HttpApp {
  app: Express;
  openApi: OpenApiDocument;
}

const DOCS_PATH = '/docs/swagger';

function routeHandler(route: Route): RequestHandler {
  return async (req, res) => {
    const input = validateInput(route, { params: req.params, query: req.query, body: req.body });
    const context = {
      req,
      res,
      get log() {
        return req.log;
      },
    };
    const result = await route.handler(input as Parameters<Route['handler']>[0], context);
    if (!result) return;
    for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, value);
    if (result.body === undefined) res.status(result.status).end();
    else res.status(result.status).json(result.body);
  };
}

function bodyParserStatus(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const status = (error as { status?: unknown }).status ?? (error as { statusCode?: unknown }).statusCode;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : undefined;
}

declare module 'express-serve-static-core' {
  interface Locals {
    /** The errorReference of the error envelope answered, for the access line. */
    errorReference?: string;
    /** What made the request fail with a 5xx, for the access line. */
    errorCause?: unknown;
  }
}

/**
 * Every error becomes the envelope: an HttpError as it says, a body parser's 4xx, a dependency that is
 * unusable a 503 naming it, anything else a 500. The reference and (for a 5xx) the cause go to the request's
 * access line (see requestContext), so that one log line holds the reference, the cause and the route.
 */
function errorHandler(dependencyFailure: HttpAppOptions['dependencyFailure']): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    if (res.headersSent) return next(error);
    let envelope;
    let cause = error;
    const unavailable = error instanceof HttpError ? undefined : dependencyFailure?.(error);
    if (error instanceof HttpError) {
      // A 503 of the route's own whose cause is a dependency known to be down says which, and why.
      const why = error.statusCode === 503 && error.cause !== undefined ? dependencyFailure?.(error.cause) : undefined;
      envelope = errorEnvelope(error.statusCode, why ? `${error.message}: ${why.message}` : error.messages);
      if (why) cause = why.cause;
      for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
    } else if (unavailable !== undefined) {
      envelope = errorEnvelope(503, unavailable.message);
      cause = unavailable.cause;
    } else if (bodyParserStatus(error) !== undefined) {
      const status = bodyParserStatus(error) as number;
      const type = (error as { type?: string }).type;
      const message =
        type === 'entity.parse.failed'
          ? 'body: is not valid JSON'
          : type === 'entity.too.large'
            ? 'body: is larger than the allowed limit'
            : (error as Error).message;
      envelope = errorEnvelope(status, message);
    } else {
      envelope = errorEnvelope(500, 'Internal server error');
    }
    res.locals.errorReference = envelope.errorReference;
    if (envelope.statusCode >= 500) res.locals.errorCause = cause;
    else req.log.debug({ errorReference: envelope.errorReference, message: envelope.message }, 'client error');
    res.status(envelope.statusCode).json(envelope);
  };
}

/**
 * The HTTP surface of every component: request ids, access log and latency metrics, security headers, JSON
 * bodies with a size limit, validated routes, the OpenAPI document and Swagger UI, and one error envelope.
 */
export function createHttpApp(options: HttpAppOptions): HttpApp {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', options.trustProxy ?? false);
  if (options.basePath) app.use(servePathPrefix(options.basePath));
  const duration = createHttpDurationHistogram(options.metrics);
  // The span first, so that the request's access line is written inside it and carries its trace id.
  if (options.tracing) app.use(traceRequests());
  app.use(requestContext(app, options.logger, duration));

  // Who is calling and how often, before anything else reads the request: tokens name the client for the
  // logs and the limit; the limit applies to everything but the open routes (health, metrics).
  if (options.bearer) app.use(identifyClient(options.bearer));
  if (options.rateLimit) {
    const exempt = new Set(options.routes.filter((route) => route.access === 'open').map((route) => route.path));
    app.use(rateLimit({ ...options.rateLimit, logger: options.logger, metrics: options.metrics, exempt }));
  }

  const strict = helmet({ contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } });
  const relaxed = helmet({ contentSecurityPolicy: false });
  for (const mount of options.mounts ?? []) {
    app.use(
      mount.path,
      (_req, res, next) => ((res.locals.routeTemplate = mount.path), next()),
      mount.contentSecurityPolicy === false ? relaxed : strict,
      ...mount.handlers,
    );
  }
  app.use(strict);

  // A route's token check comes before its body is read, and the body before its own middleware (a multipart
  // parser) and validation.
  const json = express.json({ limit: options.jsonLimit ?? '1mb' });
  const bearer = options.bearer;
  for (const route of options.routes) {
    const matched: RequestHandler = (_req, res, next) => ((res.locals.routeTemplate = route.path), next());
    const guard = bearer && requiresToken(route, bearer) ? [requireToken] : [];
    app[route.method](
      expressPath(route.path),
      matched,
      ...guard,
      json,
      ...(route.middleware ?? []),
      routeHandler(route),
    );
  }

  const openApi = buildOpenApiDocument(options.info, options.routes, options.webhooks, {
    ...(bearer ? { bearer: { protectReads: bearer.protectReads } } : {}),
    ...(options.rateLimit ? { rateLimitPerMinute: options.rateLimit.perMinute } : {}),
  });
  // Reached through the path prefix, the document names the prefix as its server, so that Swagger UI's
  // "Try it out" sends requests the Ingress routes; reached without it, requests go to the plain paths.
  const prefixed = options.basePath ? { ...openApi, servers: [{ url: options.basePath }] } : openApi;
  const documentFor = (res: Response) => (res.locals.basePath ? prefixed : openApi);
  const serveDocument: RequestHandler = (_req, res) => {
    res.locals.routeTemplate = `${DOCS_PATH}.json`;
    res.json(documentFor(res));
  };
  app.get(`${DOCS_PATH}.json`, serveDocument);
  app.get(`${DOCS_PATH}-json`, serveDocument);
  const docsTemplate: RequestHandler = (req, res, next) => {
    res.locals.routeTemplate = DOCS_PATH;
    // swagger-ui-express renders req.swaggerDoc when there is one. It keeps the last one it rendered for
    // requests without, so every request names its document.
    (req as { swaggerDoc?: unknown }).swaggerDoc = documentFor(res);
    next();
  };
  app.use(
    DOCS_PATH,
    docsTemplate,
    swaggerUi.serveFiles(openApi),
    swaggerUi.setup(openApi, { customSiteTitle: options.info.title }),
  );

  app.use((req, _res, next) => next(new HttpError(404, `Cannot ${req.method} ${req.path}`)));
  app.use(errorHandler(options.dependencyFailure));
  return { app, openApi };
}
