import { readFileSync } from 'node:fs';
import type { ConfigSpec } from '../config/index.js';
import { startComponent, type ComponentDefinition } from './runtime.js';

/** The version field of a package.json, read once at start (works from src/ and dist/ alike). */
export function readPackageVersion(packageJson: URL): string {
  const { version } = JSON.parse(readFileSync(packageJson, 'utf8')) as { version?: string };
  return version ?? '0.0.0';
}

/**
 * The body of a service's main.ts: `node main.js api|worker` starts that component as a real process with
 * signal handling. An unknown or missing argument prints the choices and exits 2.
 */
export async function runComponentFromArgs(
  service: string,
  launchers: Record<string, () => Promise<unknown>>,
  argv: readonly string[] = process.argv.slice(2),
): Promise<void> {
  const launch = launchers[argv[0] ?? ''];
  if (!launch) {
    process.stderr.write(`usage: ${service} <${Object.keys(launchers).join('|')}>\n`);
    process.exit(2);
  }
  try {
    await launch();
  } catch (error) {
    // A component that cannot start (its port is taken, say) says so in one line and exits 1.
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === 'EADDRINUSE' ? 'its port is already in use' : String((error as Error).message ?? error);
    process.stderr.write(`${service} ${argv[0]}: cannot start: ${reason}\n`);
    process.exit(1);
  }
}

/** Starts a component as the process's only job: configuration errors exit 1, signals shut it down. */
export function launcher<S extends ConfigSpec>(definition: ComponentDefinition<S>): () => Promise<unknown> {
  return () => startComponent(definition, { handleSignals: true });
}
