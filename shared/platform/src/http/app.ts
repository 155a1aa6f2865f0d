import express, { type ErrorRequestHandler, type Express, type RequestHandler, type Response } from 'express';
import helmet from 'helmet';
import swaggerUi from 'swagger-ui-express';
import type { Registry } from 'prom-client';
import type { Logger } from '../logging/index.js';
import { createHttpDurationHistogram } from '../metrics/index.js';
import { servePathPrefix } from './basePath.js';
import { errorEnvelope, HttpError } from './errors.js';
import { buildOpenApiDocument, type ApiInfo, type OpenApiDocument, type WebhookSpec } from './openapi.js';
import { requestContext } from './requestContext.js';
import { expressPath, type Route } from './route.js';
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
}

export interface HttpApp {
  app: Express;
  openApi: OpenApiDocument;
}

const DOCS_PATH = '/docs/swagger';

function routeHandler(route: Route): RequestHandler {
  return async (req, res) => {
    res.locals.routeTemplate = route.path;
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

const errorHandler: ErrorRequestHandler = (error: unknown, req, res, next) => {
  if (res.headersSent) return next(error);
  let envelope;
  if (error instanceof HttpError) {
    envelope = errorEnvelope(error.statusCode, error.messages);
    for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
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
    req.log.error({ err: error, errorReference: envelope.errorReference }, 'unhandled error');
  }
  if (envelope.statusCode < 500)
    req.log.debug({ errorReference: envelope.errorReference, message: envelope.message }, 'client error');
  res.status(envelope.statusCode).json(envelope);
};

/**
 * The HTTP surface of every component: request ids, access log and latency metrics, security headers, JSON
 * bodies with a size limit, validated routes, the OpenAPI document and Swagger UI, and one error envelope.
 */
export function createHttpApp(options: HttpAppOptions): HttpApp {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  if (options.basePath) app.use(servePathPrefix(options.basePath));
  const duration = createHttpDurationHistogram(options.metrics);
  app.use(requestContext(app, options.logger, duration));

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
  app.use(express.json({ limit: options.jsonLimit ?? '1mb' }));

  for (const route of options.routes) {
    app[route.method](expressPath(route.path), ...(route.middleware ?? []), routeHandler(route));
  }

  const openApi = buildOpenApiDocument(options.info, options.routes, options.webhooks);
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
  app.use(errorHandler);
  return { app, openApi };
}
