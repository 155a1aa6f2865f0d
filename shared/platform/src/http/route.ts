import type { Request, RequestHandler, Response } from 'express';
import type { z } from 'zod';
import type { Logger } from '../logging/index.js';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export type RouteAccess = 'open' | 'read' | 'write';

export interface RouteResponse {
  description: string;
  schema?: z.ZodType;
  /** application/json unless said otherwise. */
  contentType?: string;
}

/** What a handler sees besides its validated input. */
export interface RouteContext {
  req: Request;
  res: Response;
  /** The request's logger, carrying its request id. */
  log: Logger;
}

/** A handler's answer; a handler that writes to `res` itself returns nothing. */
export interface RouteResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

type Output<T> = T extends z.ZodType ? z.output<T> : undefined;

export interface RouteInput<P, Q, B> {
  params: Output<P>;
  query: Output<Q>;
  body: Output<B>;
}

/**
 * A route declared once: the same schemas validate requests and describe the operation in the
 * OpenAPI document. `path` uses OpenAPI templating (`/v1/things/{id}`).
 */
export interface RouteSpec<P, Q, B> {
  method: HttpMethod;
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags?: string[];
  params?: P;
  query?: Q;
  body?: B;
  /** Content type of the request body in the OpenAPI document; application/json by default. */
  bodyContentType?: string;
  responses: Record<number, RouteResponse>;
  /** Runs before validation, e.g. a multipart parser that fills req.body and req.files. */
  middleware?: RequestHandler[];
  /** Marked deprecated in the OpenAPI document. */
  deprecated?: boolean;
  /** Left out of the OpenAPI document (e.g. the document's own route). */
  hidden?: boolean;
  /**
   * Who may call it when API tokens are configured (API_TOKENS): `open` never needs a token and is never rate
   * limited (health, metrics); `read` needs one only when reads are protected; `write` always does. By default
   * GET is `read` and every other method `write`; a GET that changes something declares `write`.
   */
  access?: RouteAccess;
  handler: (input: RouteInput<P, Q, B>, context: RouteContext) => Promise<RouteResult | void> | RouteResult | void;
}

type ObjectSchema = z.ZodType<Record<string, unknown>>;

/** A route with its schema types erased, as the app and the OpenAPI builder handle it. */
export type Route = RouteSpec<ObjectSchema | undefined, ObjectSchema | undefined, z.ZodType | undefined>;

export function defineRoute<
  P extends ObjectSchema | undefined = undefined,
  Q extends ObjectSchema | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(spec: RouteSpec<P, Q, B>): Route {
  return spec as unknown as Route;
}

/** `/v1/things/{id}` → `/v1/things/:id` */
export function expressPath(openApiPath: string): string {
  return openApiPath.replace(/\{([^}]+)\}/g, ':$1');
}
