// The import graph of the gateway's TypeScript sources, as the dev runner needs it: which source files (and Lua
// scripts) a component's process runs, so that a saved file restarts only the components that run it, and which
// third-party packages they load, so that a standby process can load them before it is needed.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, posix } from 'node:path';
import ts from 'typescript';
import type { WorkspacePackage } from '../workspaces.js';

interface Parsed {
  mtimeMs: number;
  /** Repository-relative files this one imports (type-only imports too) or loads (Lua scripts beside it). */
  local: string[];
  /** Third-party specifiers as written, e.g. bullmq, multiformats/cid. */
  external: string[];
}

const BUILTINS = new Set(builtinModules);
// A module that loads a script beside it by URL: new URL('./reserveNonce.lua', import.meta.url), `./${name}.lua`.
const LOADS_LUA = /\.lua[`'"]/;

export class SourceGraph {
  private readonly parsed = new Map<string, Parsed>();
  private readonly byName: Map<string, WorkspacePackage>;

  constructor(
    private readonly root: string,
    packages: readonly WorkspacePackage[],
  ) {
    this.byName = new Map(packages.map((pkg) => [pkg.name, pkg]));
  }

  /**
   * Every file reachable from `entries` through imports, not entering `barriers` (a service's other role: main.ts
   * imports both its api and its worker, but a process runs one of them). Files are read again when their mtime
   * changed since the last walk; a deleted file is still listed where something imports it.
   */
  reach(entries: readonly string[], barriers: ReadonlySet<string> = new Set()): Set<string> {
    const seen = new Set<string>();
    const pending = entries.filter((entry) => !barriers.has(entry));
    while (pending.length > 0) {
      const file = pending.pop()!;
      if (seen.has(file)) continue;
      seen.add(file);
      for (const next of this.parse(file).local) if (!seen.has(next) && !barriers.has(next)) pending.push(next);
    }
    return seen;
  }

  /** The files `file` imports directly (repository-relative). */
  importsOf(file: string): string[] {
    return [...this.parse(file).local];
  }

  /** The third-party packages (as imported: `multiformats/cid`) that the given files import. */
  externals(files: Iterable<string>): Set<string> {
    return new Set([...files].flatMap((file) => this.parse(file).external));
  }

  private parse(file: string): Parsed {
    const path = join(this.root, file);
    const mtimeMs = existsSync(path) ? statSync(path).mtimeMs : -1;
    const known = this.parsed.get(file);
    if (known && known.mtimeMs === mtimeMs) return known;
    const parsed: Parsed = { mtimeMs, local: [], external: [] };
    if (mtimeMs >= 0 && file.endsWith('.ts')) {
      const text = readFileSync(path, 'utf8');
      for (const { fileName: specifier } of ts.preProcessFile(text, true, true).importedFiles) {
        const resolved = this.resolve(file, specifier);
        if (resolved) parsed.local.push(resolved);
        else if (!specifier.startsWith('.') && !specifier.startsWith('node:') && !BUILTINS.has(specifier))
          parsed.external.push(specifier);
      }
      if (LOADS_LUA.test(text)) {
        const folder = posix.dirname(file);
        for (const name of readdirSync(join(this.root, folder)))
          if (name.endsWith('.lua')) parsed.local.push(posix.join(folder, name));
      }
    }
    this.parsed.set(file, parsed);
    return parsed;
  }

  /** A relative import or a workspace package's export, as the repository-relative file it loads. */
  private resolve(from: string, specifier: string): string | undefined {
    if (specifier.startsWith('.')) {
      const base = posix.join(posix.dirname(from), specifier);
      const candidates = base.endsWith('.js')
        ? [base.replace(/\.js$/, '.ts'), base]
        : [base, `${base}.ts`, `${base}/index.ts`];
      return candidates.find((candidate) => existsSync(join(this.root, candidate))) ?? candidates[0];
    }
    const workspace = /^(@[^/]+\/[^/]+|[^@/][^/]*)(\/.*)?$/.exec(specifier);
    const pkg = workspace && this.byName.get(workspace[1]!);
    return pkg?.sources.get(workspace![2] ? `.${workspace![2]}` : '.');
  }
}
