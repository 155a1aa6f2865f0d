import { OpenAPIRegistry, OpenApiGeneratorV31, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { z } from 'zod';
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

export type OpenApiDocument = ReturnType<OpenApiGeneratorV31['generateDocument']>;

function toRouteConfig(route: Route): RouteConfig {
  const responses: RouteConfig['responses'] = {};
  for (const [status, response] of Object.entries(route.responses)) {
    responses[status] = response.schema
      ? {
          description: response.description,
          content: { [response.contentType ?? 'application/json']: { schema: response.schema } },
        }
      : { description: response.description };
  }
  return {
    method: route.method,
    path: route.path,
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    ...(route.tags ? { tags: route.tags } : {}),
    ...(route.deprecated ? { deprecated: true } : {}),
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
    responses,
  } as RouteConfig;
}

/** The OpenAPI 3.1 document of a component, built from the same route declarations that serve requests. */
export function buildOpenApiDocument(
  info: ApiInfo,
  routes: readonly Route[],
  webhooks: readonly WebhookSpec[] = [],
): OpenApiDocument {
  const registry = new OpenAPIRegistry();
  for (const route of routes) if (!route.hidden) registry.registerPath(toRouteConfig(route));
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
