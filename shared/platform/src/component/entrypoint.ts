import { readFileSync } from 'node:fs';
import { ConfigError, type ConfigSpec } from '../config/index.js';
import { migrateKeyspace, startComponent, type ComponentDefinition } from './runtime.js';

/** The version field of a package.json, read once at start (works from src/ and dist/ alike). */
export function readPackageVersion(packageJson: URL): string {
  const { version } = JSON.parse(readFileSync(packageJson, 'utf8')) as { version?: string };
  return version ?? '0.0.0';
}

/**
 * The body of a service's main.ts: `node main.js api|worker` starts that component (of `components`, by its
 * argument) as a real process with signal handling; configuration errors exit 1. `node main.js migrate` brings the
 * service's keyspace to the layout its components read (migrateKeyspace) and exits, 1 when it cannot. An unknown or
 * missing argument prints the choices and exits 2.
 */
export async function runComponentFromArgs(
  service: string,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each component has its own configuration type
  components: Record<string, ComponentDefinition<any>>,
  argv: readonly string[] = process.argv.slice(2),
): Promise<void> {
  if (argv[0] === 'migrate') {
    try {
      await migrateKeyspace(Object.values(components)[0]!, process.env, (line) => process.stdout.write(`${line}\n`));
      process.exit(0);
    } catch (error) {
      const reason = error instanceof ConfigError ? error.message : String((error as Error).message ?? error);
      process.stderr.write(`${service} migrate: ${reason}\n`);
      process.exit(1);
    }
  }
  const definition = components[argv[0] ?? ''];
  if (!definition) {
    process.stderr.write(`usage: ${service} <${[...Object.keys(components), 'migrate'].join('|')}>\n`);
    process.exit(2);
  }
  // The service's env file is shared by its components: what one of them reads is known to the others.
  const serviceVariables = Object.values(components).flatMap((component) =>
    Object.keys(component.config as ConfigSpec),
  );
  try {
    await startComponent(definition, { handleSignals: true, serviceVariables });
  } catch (error) {
    // A component that cannot start (its port is taken, say) says so in one line and exits 1.
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === 'EADDRINUSE' ? 'its port is already in use' : String((error as Error).message ?? error);
    process.stderr.write(`${service} ${argv[0]}: cannot start: ${reason}\n`);
    process.exit(1);
  }
}
