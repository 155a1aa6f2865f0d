import type { z } from 'zod';
import { badRequest } from './errors.js';
import type { Route } from './route.js';

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

function describe(location: string, issue: z.core.$ZodIssue, raw: unknown): string {
  const path = [location, ...issue.path.map(String)].join('.');
  // A missing field reads "is required" whatever kind of value it should have been (not for rules of our own,
  // such as "is required for a link", which say more).
  if (issue.code !== 'custom' && valueAt(raw, issue.path) === undefined) return `${path}: is required`;
  return `${path}: ${issue.message}`;
}

/**
 * Validates params, query and body together so that a client learns about every problem at once.
 * Throws a 400 HttpError whose message lists each problem as `location.field: problem`.
 */
export function validateInput(route: Route, raw: { params: unknown; query: unknown; body: unknown }) {
  const problems: string[] = [];
  const parse = (location: string, schema: z.ZodType | undefined, value: unknown): unknown => {
    if (!schema) return undefined;
    const result = schema.safeParse(value);
    if (result.success) return result.data;
    problems.push(...result.error.issues.map((issue) => describe(location, issue, value)));
    return undefined;
  };
  const input = {
    params: parse('params', route.params, raw.params),
    query: parse('query', route.query, raw.query),
    body: parse('body', route.body, raw.body),
  };
  if (problems.length > 0) throw badRequest(problems);
  return input;
}
