// The image installs with `npm ci --omit=dev --omit=peer`: a package that production code imports but that is only
// a devDependency (here or through a stale lockfile), or that only a peer dependency brings, would be missing there
// and crash the component at start.
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const readJson = (path: string) => JSON.parse(readFileSync(join(root, path), 'utf8'));

/** The packages whose src/ runs in the image: every shared/* and services/* workspace, and the devchain. */
const productionPackages = [
  ...['shared', 'services'].flatMap((dir) => readdirSync(join(root, dir)).map((name) => `${dir}/${name}`)),
  'dev/devchain',
];

const sourceFiles = (dir: string): string[] =>
  readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : /\.[cm]?[jt]s$/.test(entry.name) && !/\.test\.[jt]s$/.test(entry.name)
        ? [join(dir, entry.name)]
        : [],
  );

// Static imports and re-exports that outlive compilation (`import type` and `export type` are erased), dynamic
// import(), require() and require.resolve() (also through createRequire(...)).
const SPECIFIER =
  /^\s*(?:import|export)\s+(?!type\s)(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)|(?:\brequire|\brequire\.resolve|\)\.resolve)\(\s*['"]([^'"]+)['"]\s*\)/gm;

/** The npm packages a file needs at run time, by package name (`@scope/name` or `name`). */
function importedPackages(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  return [...text.matchAll(SPECIFIER)]
    .map((match) => (match[1] ?? match[2] ?? match[3]) as string)
    .filter((specifier) => !specifier.startsWith('.') && !specifier.startsWith('node:'))
    .map((specifier) =>
      specifier
        .split('/')
        .slice(0, specifier.startsWith('@') ? 2 : 1)
        .join('/'),
    )
    .filter((name) => !builtinModules.includes(name));
}

interface LockedPackage {
  dev?: boolean;
  peer?: boolean;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}
const locked = (readJson('package-lock.json') as { packages: Record<string, LockedPackage> }).packages;

/** The lockfile path a package named `name` required from the one at `from` resolves to, as Node would find it. */
function lockedPath(from: string, name: string): string | undefined {
  for (let base = from; ;) {
    const path = `${base === '' ? '' : `${base}/`}node_modules/${name}`;
    if (locked[path]) return path;
    if (base === '') return undefined;
    const parent = base.lastIndexOf('/node_modules/');
    base = parent < 0 ? '' : base.slice(0, parent);
  }
}

const runtimeImports = productionPackages.map((folder) => ({
  folder,
  manifest: readJson(`${folder}/package.json`) as { dependencies?: Record<string, string> },
  imported: [...new Set(sourceFiles(`${folder}/src`).flatMap(importedPackages))].sort(),
}));

describe('runtime dependencies of the production packages', () => {
  it('finds what the code imports (the scan itself works)', () => {
    const devchain = runtimeImports.find((p) => p.folder === 'dev/devchain');
    // a static import, a require.resolve and a createRequire(...).resolve
    expect(devchain?.imported).toEqual(expect.arrayContaining(['ws', '@dsnp/schemas', '@frequency-chain/api-augment']));
  });

  it('lists every package its src/ imports in its own "dependencies", not devDependencies', () => {
    const missing = runtimeImports.flatMap(({ folder, manifest, imported }) =>
      imported.filter((name) => !(name in (manifest.dependencies ?? {}))).map((name) => `${folder}: ${name}`),
    );
    expect(missing).toEqual([]);
  });

  it('keeps each of them in `npm ci --omit=dev --omit=peer`: package-lock.json marks none dev or peer only', () => {
    const omitted = runtimeImports.flatMap(({ folder, imported }) =>
      imported
        .filter((name) => {
          const path = lockedPath(folder, name);
          return path === undefined || locked[path]?.dev === true || locked[path]?.peer === true;
        })
        .map((name) => `${folder}: ${name}`),
    );
    expect(omitted).toEqual([]);
  });

  it('leaves out with --omit=peer only the React Native packages that no Node code path loads', () => {
    // A production package whose required peer only peers bring: that peer is missing from the image. The two below
    // are isomorphic-webcrypto's (siwf) React Native random sources; in Node it uses @peculiar/webcrypto.
    const missingPeers = Object.entries(locked)
      .filter(([, entry]) => !entry.dev && !entry.peer)
      .flatMap(([path, entry]) =>
        Object.keys(entry.peerDependencies ?? {})
          .filter((peer) => !entry.peerDependenciesMeta?.[peer]?.optional)
          .filter((peer) => locked[lockedPath(path, peer) ?? '']?.peer === true)
          .map((peer) => `${path.replace(/^.*node_modules\//, '')} -> ${peer}`),
      );
    expect(missingPeers).toEqual(['expo-random -> expo', 'react-native-securerandom -> react-native']);
  });
});
