import type { z } from 'zod';
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

/**
 * Parses the environment against a component's specification. Every problem is collected before
 * anything is reported, so that an operator fixes them all in one go. An empty string counts as unset,
 * which is what Kubernetes and Compose produce for a variable declared without a value.
 */
export function parseConfig<S extends ConfigSpec>(spec: S, env: NodeJS.ProcessEnv): ConfigOf<S> {
  const problems: string[] = [];
  const config: Record<string, unknown> = {};
  for (const [name, variable] of Object.entries(spec)) {
    const raw = env[name] === '' ? undefined : env[name];
    const result = variable.schema.safeParse(raw);
    if (result.success) config[name] = result.data;
    else problems.push(...result.error.issues.map((issue) => describeIssue(name, issue, raw)));
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config as ConfigOf<S>;
}

/** For a composition root: parse, or print every problem and exit 1. */
export function loadConfigOrExit<S extends ConfigSpec>(
  spec: S,
  env: NodeJS.ProcessEnv,
  component: string,
): ConfigOf<S> {
  try {
    return parseConfig(spec, env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${component}: ${error.message}\n`);
    process.exit(1);
  }
}
