import { OpenAPIRegistry, OpenApiGeneratorV31, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { Route } from './route.js';

export interface ApiInfo {
  title: string;
  version: string;
  description?: string;
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
export function buildOpenApiDocument(info: ApiInfo, routes: readonly Route[]): OpenApiDocument {
  const registry = new OpenAPIRegistry();
  for (const route of routes) if (!route.hidden) registry.registerPath(toRouteConfig(route));
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: { title: info.title, version: info.version, ...(info.description ? { description: info.description } : {}) },
  });
}
