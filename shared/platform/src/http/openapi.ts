import { maxHeaderSize } from 'node:http';
import {
  OpenAPIRegistry,
  OpenApiGeneratorV31,
  type ResponseConfig,
  type RouteConfig,
} from '@asteasolutions/zod-to-openapi';
import type { z } from 'zod';
import { requiresToken } from './bearerTokens.js';
import { errorEnvelopeSchema } from './errors.js';
import type { Route } from './route.js';

export interface ApiInfo {
  title: string;
  version: string;
  description?: string;
}

/** A request this service sends to its callers (OpenAPI 3.1 `webhooks`): its name, body and the answers it expects. */
export interface WebhookSpec {
  name: string;
  operationId: string;
  summary: string;
  description?: string;
  body: z.ZodType;
  responses: Record<number, { description: string }>;
}

/**
 * What the running component does around its routes, so that the document says what it answers: bearer
 * tokens (401 and `security` on the operations that need one) and a rate limit (429).
 */
export interface HttpSurface {
  bearer?: { protectReads: boolean };
  rateLimitPerMinute?: number;
}

export type OpenApiDocument = ReturnType<OpenApiGeneratorV31['generateDocument']>;

const SECURITY_SCHEME = 'bearer';

const failure = (description: string): ResponseConfig => ({
  description,
  content: { 'application/json': { schema: errorEnvelopeSchema } },
});

/**
 * The answers every operation can give besides its own: what validation, the body limit, Node's header limit,
 * tokens, the rate limit and a missing dependency produce, with the error envelope. A route that declares one
 * of these keeps its own description.
 */
function surfaceResponses(route: Route, surface: HttpSurface): Record<string, ResponseConfig> {
  const open = route.access === 'open';
  const responses: Record<string, ResponseConfig> = {};
  if (route.params || route.query || route.body)
    responses[400] = failure('The request is invalid: `message` lists every problem as `location.field: problem`');
  if (route.body && (route.bodyContentType ?? 'application/json') === 'application/json')
    responses[413] = failure('The JSON body is larger than the api accepts (HTTP_JSON_LIMIT)');
  if (surface.bearer && requiresToken(route, surface.bearer))
    responses[401] = {
      ...failure('No bearer token, or not one of the api tokens'),
      headers: { 'WWW-Authenticate': { description: '`Bearer realm="api"`', schema: { type: 'string' } } },
    };
  if (surface.rateLimitPerMinute && !open)
    responses[429] = {
      ...failure(`The client made more than ${surface.rateLimitPerMinute} requests in its current minute`),
      headers: {
        'Retry-After': { description: 'Seconds until its window ends', schema: { type: 'integer', minimum: 1 } },
      },
    };
  responses[431] = failure(
    `The request line and headers (a long query string counts) exceed ${Math.floor(maxHeaderSize / 1024)} KiB`,
  );
  if (!open)
    responses[503] = failure('A dependency the operation needs (Redis, the chain, IPFS) is unavailable; retry later');
  return responses;
}

function toRouteConfig(route: Route, surface: HttpSurface): RouteConfig {
  const responses: Record<string, ResponseConfig> = surfaceResponses(route, surface);
  for (const [status, response] of Object.entries(route.responses)) {
    if (response.schema)
      responses[status] = {
        description: response.description,
        content: { [response.contentType ?? 'application/json']: { schema: response.schema } },
      };
    // An error the route declares without a body of its own comes in the envelope, as every error does.
    else
      responses[status] = Number(status) >= 400 ? failure(response.description) : { description: response.description };
  }
  const ordered = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b)));
  return {
    method: route.method,
    path: route.path,
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    ...(route.tags ? { tags: route.tags } : {}),
    ...(route.deprecated ? { deprecated: true } : {}),
    ...(surface.bearer && requiresToken(route, surface.bearer) ? { security: [{ [SECURITY_SCHEME]: [] }] } : {}),
    request: {
      ...(route.params ? { params: route.params } : {}),
      ...(route.query ? { query: route.query } : {}),
      ...(route.body
        ? {
            body: {
              required: true,
              content: { [route.bodyContentType ?? 'application/json']: { schema: route.body } },
            },
          }
        : {}),
    },
    responses: ordered,
  } as RouteConfig;
}

/**
 * The OpenAPI 3.1 document of a component, built from the same route declarations that serve requests and
 * from what the component does around them (`surface`), so that it documents every answer it can give.
 */
export function buildOpenApiDocument(
  info: ApiInfo,
  routes: readonly Route[],
  webhooks: readonly WebhookSpec[] = [],
  surface: HttpSurface = {},
): OpenApiDocument {
  const registry = new OpenAPIRegistry();
  if (surface.bearer)
    registry.registerComponent('securitySchemes', SECURITY_SCHEME, {
      type: 'http',
      scheme: 'bearer',
      description: surface.bearer.protectReads
        ? 'One of the api tokens (API_TOKENS), required by every operation but health and metrics'
        : 'One of the api tokens (API_TOKENS), required by every operation that writes or controls; look-ups are open',
    });
  for (const route of routes) if (!route.hidden) registry.registerPath(toRouteConfig(route, surface));
  for (const webhook of webhooks) {
    registry.registerWebhook({
      method: 'post',
      path: webhook.name,
      operationId: webhook.operationId,
      summary: webhook.summary,
      ...(webhook.description ? { description: webhook.description } : {}),
      request: { body: { required: true, content: { 'application/json': { schema: webhook.body } } } },
      responses: webhook.responses,
    } as RouteConfig);
  }
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: { title: info.title, version: info.version, ...(info.description ? { description: info.description } : {}) },
  });
}
