import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The command line of a document generator: with `--write` it writes the document, without it exits with
 * status 1 when the file differs from what it would write (naming `command`, which regenerates it).
 */
export function writeOrCheck(path: string, rendered: string, command: string): void {
  if (process.argv.includes('--write')) {
    writeFileSync(path, rendered);
    process.stdout.write(`wrote ${path}\n`);
  } else if (readFileSync(path, 'utf8') !== rendered) {
    process.stderr.write(`${relative(root, path)} is stale: run \`${command}\`\n`);
    process.exit(1);
  }
}
