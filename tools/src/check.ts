// `make check`: the quick check of a change, before `make test` runs everything. The change is every file that
// differs from where the branch left main (`git merge-base HEAD main`; CHECK_BASE names another revision), what
// is not committed yet included, and untracked files that git does not ignore. It runs:
// - the type check of the whole tree, incremental (its state in .dev/, so a second run re-checks what changed),
//   beside the other steps;
// - ESLint and Prettier on the changed files, and the import-cycle check (tools/lint/cycles.js) on the tree;
// - the jest suites that import a changed file (`--findRelatedTests`), in the projects of the changed workspace
//   packages and of the packages that depend on them, never the slow, e2e and cluster projects. Jest follows
//   relative imports, not a workspace package's "source" export, so in practice these are the changed packages'
//   own suites; a dependant's use of a changed package is checked by the type check (and its suites by make test);
// - the docs check when Markdown or the Makefile changed.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join, posix } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { packageOf, readWorkspaces, withDependants, type WorkspacePackage } from './workspaces.js';

/** A jest project of jest.config.js: its name and its folder (relative to the root; '' for the root). */
export interface JestProject {
  name: string;
  folder: string;
}

export interface CheckPlan {
  /** The jest projects to search for suites related to `changed`. */
  projects: string[];
  /** The changed files jest's --findRelatedTests starts from (sources and tests, no longer deleted). */
  related: string[];
  /** Files ESLint and Prettier check. */
  lint: string[];
  /** True when Markdown or the Makefile changed: the docs check runs. */
  docs: boolean;
}

/** Projects never run by `make check`: minutes each, or needing a cluster. */
export const NOT_CHECKED = new Set(['slow', 'e2e', 'cluster', 'skaffold', 'keda']);

const LINTED = /\.(ts|js|mjs|cjs)$/;

/** What `make check` runs for a change (`changed`: repository-relative paths of files that exist). */
export function planCheck(
  changed: readonly string[],
  packages: readonly WorkspacePackage[],
  projects: readonly JestProject[],
): CheckPlan {
  const touched = new Set(changed.flatMap((file) => packageOf(packages, file)?.name ?? []));
  const folders = new Set(
    packages.filter((pkg) => withDependants(packages, touched).has(pkg.name)).map((pkg) => pkg.folder),
  );
  return {
    projects: projects
      .filter((project) => folders.has(project.folder) && !NOT_CHECKED.has(project.name))
      .map((project) => project.name),
    related: changed.filter((file) => /\.(ts|js)$/.test(file) && packageOf(packages, file) !== undefined),
    lint: changed.filter((file) => LINTED.test(file)),
    docs: changed.some((file) => file.endsWith('.md') || posix.basename(file) === 'Makefile'),
  };
}

/** The files of the change, relative to `root`, that still exist. */
export function changedFiles(root: string, base: string): string[] {
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean);
  const since = git('merge-base', 'HEAD', base)[0]!;
  const files = [...git('diff', '--name-only', since), ...git('ls-files', '--others', '--exclude-standard')];
  return [...new Set(files)].filter((file) => existsSync(join(root, file))).sort();
}

/** The projects of jest.config.js (the cluster ones only when asked for by name, as jest.config.js says). */
export async function jestProjects(root: string): Promise<JestProject[]> {
  const config = (await import(pathToFileURL(join(root, 'jest.config.js')).href)) as {
    default: { projects: { displayName: string; rootDir: string }[] };
  };
  return config.default.projects.map(({ displayName, rootDir }) => ({
    name: displayName,
    folder: rootDir.replace(/^<rootDir>\/?/, ''),
  }));
}

async function main(): Promise<void> {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const base = process.env.CHECK_BASE ?? 'main';
  const changed = changedFiles(root, base);
  // A Lua script is loaded by the modules beside it (by URL, which jest does not follow): they stand for it.
  const scripts = changed
    .filter((file) => file.endsWith('.lua'))
    .flatMap((file) =>
      readdirSync(join(root, posix.dirname(file)))
        .filter((name) => name.endsWith('.ts'))
        .map((name) => posix.join(posix.dirname(file), name)),
    );
  const plan = planCheck([...new Set([...changed, ...scripts])], readWorkspaces(root), await jestProjects(root));
  const say = (line: string) => process.stdout.write(`check | ${line}\n`);
  say(`${changed.length} files differ from ${base} (merge base) or are not committed`);
  const failed: string[] = [];
  const finished = (what: string, started: number, status: number | null) => {
    say(`${what}: ${status === 0 ? 'ok' : 'FAILED'} (${Math.round((Date.now() - started) / 1000)} s)`);
    if (status !== 0) failed.push(what);
  };
  // The type check is CPU, the suites mostly wait for their processes: it runs beside the other steps, its output
  // (only errors) shown when it ends.
  const typeCheck = { what: 'type check (incremental)', started: Date.now(), output: [] as Buffer[] };
  say(`${typeCheck.what}…`);
  const tsc = spawn(
    'npx',
    ['tsc', '-p', 'tsconfig.json', '--noEmit', '--incremental', '--tsBuildInfoFile', '.dev/typecheck.tsbuildinfo'],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  for (const stream of [tsc.stdout, tsc.stderr]) stream.on('data', (chunk: Buffer) => typeCheck.output.push(chunk));
  const typeChecked = new Promise<number | null>((resolve) => tsc.once('close', resolve));
  const steps: [string, string, string[]][] = [['import cycles', 'node', ['tools/lint/cycles.js']]];
  if (plan.lint.length > 0) steps.push(['ESLint on the changed files', 'npx', ['eslint', ...plan.lint]]);
  if (changed.length > 0)
    steps.push(['Prettier on the changed files', 'npx', ['prettier', '--check', '--ignore-unknown', ...changed]]);
  if (plan.docs) steps.push(['docs check', 'npx', ['tsx', 'tools/src/docsCheck.ts']]);
  if (plan.projects.length > 0 && plan.related.length > 0)
    steps.push([
      `suites importing the changed files (projects ${plan.projects.join(', ')})`,
      'npm',
      [
        'test',
        '--',
        `--maxWorkers=${process.env.TEST_WORKERS ?? 3}`,
        '--passWithNoTests',
        '--selectProjects',
        ...plan.projects,
        '--findRelatedTests',
        ...plan.related,
      ],
    ]);
  for (const [what, command, args] of steps) {
    const started = Date.now();
    say(`${what}…`);
    const status = await new Promise<number | null>((resolve) =>
      spawn(command, args, { cwd: root, stdio: 'inherit' }).once('close', resolve),
    );
    finished(what, started, status);
  }
  const status = await typeChecked;
  process.stdout.write(Buffer.concat(typeCheck.output));
  finished(typeCheck.what, typeCheck.started, status);
  say(failed.length === 0 ? 'all passed' : `failed: ${failed.join('; ')}`);
  process.exit(failed.length === 0 ? 0 : 1);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
