import type { z } from 'zod';
import { REFERENCE_NAMES, translateReferenceNames } from './referenceNames.js';
import type { ConfigOf, ConfigSpec } from './variable.js';

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

function describeIssue(name: string, issue: z.core.$ZodIssue, raw: unknown): string {
  const where = issue.path.length > 0 ? `${name}.${issue.path.join('.')}` : name;
  if (issue.code === 'invalid_type' && raw === undefined) return `${where}: is required`;
  return `${where}: ${issue.message}`;
}

/** What reading a component's configuration found: the configuration, and what to say once at start. */
export interface ConfigReading<C> {
  config: C;
  /** Settings that are ignored (the reference's inert ones, names that look like ours but are not): one line each. */
  notices: string[];
}

/** Environment variables commonly set for other programs, whose first word is also one of ours. */
const OTHER_PROGRAMS = new Set(['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY']);
/** What Kubernetes sets for each Service of the namespace (`<NAME>_SERVICE_HOST`, `<NAME>_PORT_6379_TCP`, ...). */
const SERVICE_LINK = /_(SERVICE_HOST|SERVICE_PORT(_[A-Z0-9_]+)?|PORT(_\d+_(TCP|UDP|SCTP)(_(ADDR|PORT|PROTO))?)?)$/;

/** The edit distance of two names, to suggest the variable a misspelt one meant. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length]!;
}

/**
 * Variables of `env` that look like settings of this gateway (their first word, such as `REDIS` or `WEBHOOK`, is
 * the first word of one of `known`) but are none of them, nor one of the reference gateway's: one notice each,
 * naming the nearest known variable when one is close.
 */
export function lookalikeNotices(env: NodeJS.ProcessEnv, known: ReadonlySet<string>, component: string): string[] {
  const words = new Set([...known].map((name) => name.split('_')[0]));
  return Object.keys(env)
    .filter(
      (name) =>
        /^[A-Z][A-Z0-9_]*$/.test(name) &&
        !known.has(name) &&
        !(name in REFERENCE_NAMES) &&
        !OTHER_PROGRAMS.has(name) &&
        !SERVICE_LINK.test(name) &&
        words.has(name.split('_')[0]),
    )
    .sort()
    .map((name) => {
      const [nearest] = [...known]
        .map((candidate) => ({ candidate, apart: distance(name, candidate) }))
        .filter(({ apart }) => apart <= 3)
        .sort((a, b) => a.apart - b.apart || a.candidate.localeCompare(b.candidate));
      const hint = nearest ? ` (did you mean ${nearest.candidate}?)` : '';
      return `${name} is not a setting of ${component} or of its service: ignored${hint}`;
    });
}

/**
 * Reads a component's configuration from the environment: the reference gateway's names are carried over or
 * refused (translateReferenceNames), then every variable is parsed against the specification. Every problem is
 * collected before anything is reported, so that an operator fixes them all in one go. An empty string counts as
 * unset, which is what Kubernetes and Compose produce for a variable declared without a value. `serviceVariables`
 * are the variables of the service's other components, which share its env files and are not told apart as unknown.
 */
export function readConfig<S extends ConfigSpec>(
  spec: S,
  env: NodeJS.ProcessEnv,
  component = 'this component',
  serviceVariables: readonly string[] = [],
): ConfigReading<ConfigOf<S>> {
  const own = new Set(Object.keys(spec));
  const known = new Set([...own, ...serviceVariables]);
  const reference = translateReferenceNames(env, own, known);
  const problems = [...reference.problems];
  const config: Record<string, unknown> = {};
  for (const [name, variable] of Object.entries(spec)) {
    const raw = reference.env[name] === '' ? undefined : reference.env[name];
    const result = variable.schema.safeParse(raw);
    if (result.success) config[name] = result.data;
    else problems.push(...result.error.issues.map((issue) => describeIssue(name, issue, raw)));
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return { config: config as ConfigOf<S>, notices: [...reference.notices, ...lookalikeNotices(env, known, component)] };
}

/** The configuration alone (see readConfig). */
export function parseConfig<S extends ConfigSpec>(spec: S, env: NodeJS.ProcessEnv): ConfigOf<S> {
  return readConfig(spec, env).config;
}

/** For a composition root: read, or print every problem and exit 1. */
export function loadConfigOrExit<S extends ConfigSpec>(
  spec: S,
  env: NodeJS.ProcessEnv,
  component: string,
  serviceVariables: readonly string[] = [],
): ConfigReading<ConfigOf<S>> {
  try {
    return readConfig(spec, env, component, serviceVariables);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${component}: ${error.message}\n`);
    process.exit(1);
  }
}
