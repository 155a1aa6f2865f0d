// The workspace packages of the repository as package.json declares them: which folder each is, which other
// workspace packages it depends on, and where its exports' TypeScript sources are. The dev runner follows imports
// through them (tools/src/dev/sourceGraph.ts); `make check` maps a change to packages and their dependants.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';

export interface WorkspacePackage {
  /** e.g. @frequency-gateway/webhooks */
  name: string;
  /** Its folder, relative to the repository root, e.g. shared/webhooks. */
  folder: string;
  /** The workspace packages it depends on (dependencies and devDependencies), by name. */
  dependsOn: string[];
  /** Export subpath ('.', './main') to its source file (the "source" condition), relative to the root. */
  sources: Map<string, string>;
}

interface PackageJson {
  name?: string;
  workspaces?: string[];
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  exports?: Record<string, string | { source?: string }>;
}

const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as PackageJson;

/** Every workspace package of the repository at `root` (the root package.json's "workspaces", `dir/*` expanded). */
export function readWorkspaces(root: string): WorkspacePackage[] {
  const folders = (readJson(join(root, 'package.json')).workspaces ?? []).flatMap((pattern) =>
    pattern.endsWith('/*')
      ? readdirSync(join(root, pattern.slice(0, -2)), { withFileTypes: true })
          .filter((entry) => entry.isDirectory())
          .map((entry) => posix.join(pattern.slice(0, -2), entry.name))
      : [pattern],
  );
  const manifests = folders
    .filter((folder) => existsSync(join(root, folder, 'package.json')))
    .map((folder) => ({ folder, json: readJson(join(root, folder, 'package.json')) }));
  const names = new Set(manifests.map(({ json }) => json.name));
  return manifests.map(({ folder, json }) => ({
    name: json.name ?? folder,
    folder,
    dependsOn: Object.keys({ ...json.dependencies, ...json.devDependencies }).filter((name) => names.has(name)),
    sources: new Map(
      Object.entries(json.exports ?? {}).flatMap(([subpath, target]) => {
        const source = typeof target === 'string' ? target : target.source;
        return source ? [[subpath, posix.join(folder, source)] as [string, string]] : [];
      }),
    ),
  }));
}

/** The package a repository-relative file is in, or undefined for a file outside every workspace package. */
export function packageOf(packages: readonly WorkspacePackage[], file: string): WorkspacePackage | undefined {
  return packages
    .filter((pkg) => file.startsWith(`${pkg.folder}/`))
    .sort((a, b) => b.folder.length - a.folder.length)[0];
}

/** The named packages and every package that depends on one of them, directly or through others. */
export function withDependants(packages: readonly WorkspacePackage[], names: Iterable<string>): Set<string> {
  const found = new Set(names);
  for (let grew = true; grew;) {
    grew = false;
    for (const pkg of packages) {
      if (!found.has(pkg.name) && pkg.dependsOn.some((name) => found.has(name))) {
        found.add(pkg.name);
        grew = true;
      }
    }
  }
  return found;
}
