import { accessSync, constants } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';

/** The full path of a program on PATH (or in the usual sbin folders, which a user's PATH may lack). */
export function findExecutable(name: string): string | undefined {
  const folders = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin', '/sbin'];
  for (const folder of folders) {
    if (!folder) continue;
    const candidate = join(folder, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Where `make tools` puts the programs it builds: `$XDG_CACHE_HOME/frequency-gateway/bin`. */
export function toolCacheDir(): string {
  return join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'frequency-gateway', 'bin');
}

/** A program `make tools` builds: the path in `envVariable` when set, else the tool cache, else PATH. */
export function findTool(name: string, envVariable: string): string | undefined {
  const given = process.env[envVariable];
  if (given) return given;
  const cached = join(toolCacheDir(), name);
  try {
    accessSync(cached, constants.X_OK);
    return cached;
  } catch {
    return findExecutable(name);
  }
}
