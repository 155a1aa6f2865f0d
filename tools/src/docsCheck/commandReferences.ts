// The `make` targets and `npm run` scripts a Markdown file's code names, checked against the Makefile and the
// package.json files. Only code is read (inline code spans and fenced blocks), and only a `make` or `npm` at the
// start of a command (line start, after `$ `, `sudo`, `&&`, `||`, `;`, `|`): prose says "make" in English.
import { existsSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { globPattern, type RepositoryIndex } from './repositoryIndex.js';

/** The targets a Makefile defines (rule lines; not pattern rules, special targets or file targets). */
export function makeTargets(makefile: string): Set<string> {
  const targets = new Set<string>();
  for (const line of makefile.split('\n')) {
    const rule = /^([A-Za-z0-9][\w.-]*(?:[ \t]+[A-Za-z0-9][\w.-]*)*)[ \t]*:(?!=)/.exec(line);
    for (const target of rule?.[1]?.split(/[ \t]+/) ?? []) targets.add(target);
  }
  return targets;
}

interface Package {
  name?: string;
  scripts?: Record<string, string>;
  workspaces?: string[];
}

/** The root package.json and its workspaces', by folder (from the root; '' the root) and by name. */
export class Packages {
  private constructor(private readonly byFolder: Map<string, Package>) {}

  static read(root: string, index: RepositoryIndex): Packages {
    const readPackage = (folder: string) =>
      JSON.parse(readFileSync(join(root, folder, 'package.json'), 'utf8')) as Package;
    const rootPackage = existsSync(join(root, 'package.json')) ? readPackage('') : {};
    const byFolder = new Map<string, Package>([['', rootPackage]]);
    const folders = [...index.files]
      .filter((file) => file.endsWith('/package.json'))
      .map((file) => posix.dirname(file));
    for (const pattern of (rootPackage.workspaces ?? []).map((workspace) => globPattern(posix.normalize(workspace))))
      for (const folder of folders.filter((candidate) => pattern.test(candidate)))
        byFolder.set(folder, readPackage(folder));
    return new Packages(byFolder);
  }

  /** A workspace as `npm -w` takes it: its folder or its package name. */
  workspace(name: string): Package | undefined {
    const folder = posix.normalize(name).replace(/\/$/, '');
    if (folder !== '' && folder !== '.' && this.byFolder.has(folder)) return this.byFolder.get(folder);
    return [...this.byFolder.entries()].find(([at, pkg]) => at !== '' && pkg.name === name)?.[1];
  }

  get root(): Package {
    return this.byFolder.get('')!;
  }

  get workspaces(): Package[] {
    return [...this.byFolder.entries()].filter(([at]) => at !== '').map(([, pkg]) => pkg);
  }
}

const COMMAND_START = new Set(['&&', '||', ';', '|', '$', 'sudo', 'then', 'do']);

/** The words of each command in a piece of code that starts with `program`, the program itself left out. */
export function commandsOf(code: string, program: string): string[][] {
  const words = code
    .replace(/(^|\s)#.*$/, '')
    .split(/\s+/)
    .filter(Boolean);
  const commands: string[][] = [];
  words.forEach((word, index) => {
    if (word !== program || (index > 0 && !COMMAND_START.has(words[index - 1]!))) return;
    const rest = words.slice(index + 1);
    const end = rest.findIndex((next) => COMMAND_START.has(next) && next !== '$');
    commands.push(end === -1 ? rest : rest.slice(0, end));
  });
  return commands;
}

/** The targets a `make` command names: its words up to the first flag or non-target; `VAR=value` skipped. */
export function makeCommandTargets(words: string[]): string[] {
  const targets: string[] = [];
  for (const word of words) {
    if (/^[A-Za-z_]\w*=/.test(word)) continue;
    if (!/^[a-z0-9][\w.-]*$/.test(word)) break;
    targets.push(word);
  }
  return targets;
}

/** What is wrong with an `npm` command's script, or undefined (also for npm commands that run no script). */
export function npmScriptProblem(words: string[], packages: Packages): string | undefined {
  const positional: string[] = [];
  const workspaces: string[] = [];
  let everyWorkspace = false;
  let ifPresent = false;
  for (let index = 0; index < words.length; index++) {
    const word = words[index]!;
    if (word === '--') break;
    const workspace = /^(?:-w|--workspace)(?:=(.+))?$/.exec(word);
    if (workspace) workspaces.push(workspace[1] ?? words[++index] ?? '');
    else if (word === '--workspaces' || word === '-ws') everyWorkspace = true;
    else if (word === '--if-present') ifPresent = true;
    else if (!word.startsWith('-')) positional.push(word);
  }
  const [verb, named] = positional;
  const script =
    verb === 'run' || verb === 'run-script' ? named : verb === 'test' || verb === 'start' ? verb : undefined;
  if (script === undefined || ifPresent) return undefined;
  if (everyWorkspace)
    return packages.workspaces.some((pkg) => pkg.scripts?.[script])
      ? undefined
      : `no workspace has an npm script "${script}"`;
  if (workspaces.length === 0)
    return packages.root.scripts?.[script] ? undefined : `no npm script "${script}" in package.json`;
  for (const name of workspaces) {
    const pkg = packages.workspace(name);
    if (!pkg) return `no workspace ${name} (npm -w takes a workspace's folder or package name)`;
    if (!pkg.scripts?.[script]) return `no npm script "${script}" in workspace ${name}`;
  }
  return undefined;
}
