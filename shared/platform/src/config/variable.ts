import { z } from 'zod';

/** One environment variable: how it is parsed, and what the configuration reference says about it. */
export interface Variable<T extends z.ZodType = z.ZodType> {
  readonly schema: T;
  readonly description: string;
  /** Secret values are never logged, reported by /healthz or shown in error messages. */
  readonly secret: boolean;
  /** A URL whose userinfo (user:password) is secret, while the rest of it may be shown. */
  readonly urlWithCredentials: boolean;
  readonly example?: string;
}

export type ConfigSpec = Readonly<Record<string, Variable>>;

export type ConfigOf<S extends ConfigSpec> = { readonly [K in keyof S]: z.output<S[K]['schema']> };

interface VariableOptions {
  secret?: boolean;
  urlWithCredentials?: boolean;
  example?: string;
}

export function variable<T extends z.ZodType>(
  schema: T,
  description: string,
  options: VariableOptions = {},
): Variable<T> {
  return {
    schema,
    description,
    secret: options.secret ?? false,
    urlWithCredentials: options.urlWithCredentials ?? false,
    ...(options.example === undefined ? {} : { example: options.example }),
  };
}

/** A variable whose whole value is secret (seed phrases, passwords, tokens). */
export function secret<T extends z.ZodType>(schema: T, description: string, example?: string): Variable<T> {
  return variable(schema, description, { secret: true, ...(example === undefined ? {} : { example }) });
}

// Schema building blocks shared by every component's configuration.

export const port = (fallback: number) => z.coerce.number().int().min(1).max(65535).default(fallback);

/** A whole number from `min` to `max`, `fallback` when unset. */
export const integerInRange = (min: number, max: number, fallback: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

export const positiveMs = (fallback: number) => z.coerce.number().int().positive().default(fallback);

export const flag = (fallback: boolean) => z.stringbool().default(fallback);

export const redisUrl = () => z.url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL' });

/** One path segment: URL path characters only (RFC 3986 pchar, percent escapes included), and not `.` or `..`. */
const PATH_SEGMENT = /^(?:[A-Za-z0-9._~!$&'()*+,;=:@-]|%[0-9A-Fa-f]{2})+$/;

/** A URL path prefix such as `/account`: starts with '/', no trailing or doubled slash, path characters only. */
export const basePath = () =>
  z.string().refine(
    (value) =>
      value.startsWith('/') &&
      value
        .slice(1)
        .split('/')
        .every((segment) => PATH_SEGMENT.test(segment) && segment !== '.' && segment !== '..'),
    { error: "must be a path such as /account: starting with '/', without a trailing '/', URL path characters only" },
  );
