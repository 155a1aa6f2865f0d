// The files and folders of a repository as the docs check sees them: what git tracks, and new files it does not
// ignore (so that a path in a README counts from the moment its file is written), without deleted ones.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, posix } from 'node:path';

export class RepositoryIndex {
  readonly files: ReadonlySet<string>;
  /** Every file's and folder's path, folders without a trailing slash. */
  private readonly paths: ReadonlySet<string>;

  constructor(files: Iterable<string>) {
    this.files = new Set(files);
    const paths = new Set<string>();
    for (const file of this.files)
      for (let path = file; path !== '.' && !paths.has(path); path = posix.dirname(path)) paths.add(path);
    this.paths = paths;
  }

  static fromGit(root: string): RepositoryIndex {
    const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
      cwd: root,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    return new RepositoryIndex(
      listed
        .split('\0')
        .filter((file) => file !== '' && !file.split('/').includes('node_modules') && existsSync(join(root, file))),
    );
  }

  /** Whether a file or folder of the repository matches `pattern` (a path from the root; see `globPattern`). */
  matches(pattern: RegExp): boolean {
    for (const path of this.paths) if (pattern.test(path)) return true;
    return false;
  }

  has(path: string): boolean {
    return this.paths.has(path);
  }
}

const WILDCARDS: Record<string, string> = { '**/': '(?:.*/)?', '**': '.*', '*': '[^/]*', '?': '[^/]' };
const escape = (text: string) => text.replace(/[.+^${}()|[\]\\]/g, '\\$&');

/**
 * A path, possibly with `*` (within a folder), `**` (across folders) and `?` wildcards, as a pattern for
 * `RepositoryIndex.matches`: anchored at the root, or with `tail` at the start of any folder.
 */
export function globPattern(path: string, { tail = false } = {}): RegExp {
  const body = escape(path)
    .replace(/\*\*\/|\*\*|\*|\?/g, (wildcard) => WILDCARDS[wildcard]!)
    .replace(/\/$/, '');
  return new RegExp(`${tail ? '(?:^|/)' : '^'}${body}$`);
}
