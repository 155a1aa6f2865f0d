// The project's bash scripts run with `set -o pipefail`. A reader that stops early (`grep -q` returns at its first
// match) can make the writer before it die of SIGPIPE, and pipefail then fails the whole test: the outcome of
// `producer | grep -q x` depends on which process the scheduler runs first. So the scripts test what a command
// printed with `grep -q x <<<"$(producer)"`, which reads everything first.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The repository's bash scripts: tracked files whose first line names bash. */
function bashScripts(): string[] {
  const listed = spawnSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' });
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  return listed.stdout
    .split('\0')
    .filter((path) => path !== '' && !path.startsWith('node_modules/'))
    .filter((path) => {
      try {
        return /^#!.*\bbash\b/.test(readFileSync(join(root, path), 'utf8').split('\n', 1)[0] ?? '');
      } catch {
        return false;
      }
    });
}

/** Lines that pipe into an early-exit grep, outside comments and outside a command line given to another shell. */
function earlyExitPipes(path: string): string[] {
  return readFileSync(join(root, path), 'utf8')
    .split('\n')
    .map((line, index) => ({ line, number: index + 1 }))
    .filter(({ line }) => !line.trimStart().startsWith('#'))
    .filter(({ line }) => /\|\s*grep\s+-[a-zA-Z]*q/.test(line) && !/\bsh -c\b/.test(line))
    .map(({ line, number }) => `${path}:${number}: ${line.trim()}`);
}

test('a pipe into grep -q fails under pipefail when the writer is still writing', () => {
  const piped = spawnSync('bash', ['-c', 'set -o pipefail; yes | grep -q y'], { encoding: 'utf8' });
  expect(piped.status).toBe(141);
  const read = spawnSync('bash', ['-c', 'set -o pipefail; grep -q y <<<"$(yes | head -n 1000)"'], { encoding: 'utf8' });
  expect(read.status).toBe(0);
});

test('no bash script pipes a command into grep -q', () => {
  const scripts = bashScripts();
  expect(scripts.length).toBeGreaterThan(20);
  expect(scripts.flatMap(earlyExitPipes)).toEqual([]);
});
