import { accessSync, constants } from 'node:fs';
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
