// Import cycles, checked by `npm run lint` after ESLint: no loop between files anywhere in the TypeScript tree
// (the files of tsconfig.json: services, shared, dev, e2e, tools, charts/test), and no loop between the folders
// of one package's src/. tools/test/cycles.test.ts proves that both kinds of loop fail and a tree without them
// passes. Each loop is printed as the chain of files (or folders) that closes it.
//
// What counts as an import: every module a file names — `import`, `import type`, `export … from`, a dynamic
// `import()` and an `import('…')` type. A type-only import is erased at run time, but a reader follows it like
// any other: two files that each need the other to be understood are one tangle, whatever the compiler emits.
// A workspace package (`@frequency-gateway/…`) resolves to its sources, so a loop through another package counts.
//
// Folders: a package's src/ is read as a tree whose sibling folders depend on each other one way only, as a
// pipeline's stages do (worker/document may not need worker/batch while worker/batch needs worker/document). An
// import from a file under one sibling into a file under another is an edge between the two siblings (at the
// level where their paths part); a loop among siblings fails. An import between a folder's own files and its
// subfolders is no folder edge: a folder's own files are where its subfolders meet (the composition root that
// wires them, the modules they share), and a loop through them is still a file loop.
//
// Why a script and not a library: import-x's `no-cycle` (an ESLint rule) leaves type-only imports out, walks the
// imports again from every file it lints (its docs call it comparatively expensive) and needs a resolver plugin for
// the "source" export condition; madge and dpdm find loops between files only. This script reads tsconfig.json,
// resolves every specifier with TypeScript's own module resolution (the repository's compiler options, so the
// "source" condition too, through one shared cache) and finds both kinds of loop on the one graph: about 2 s of
// CPU for the whole tree (some 470 files, 1,400 imports), next to ESLint's 40 s.
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** The project's files and compiler options, as `tsc -p <tsconfig>` sees them. */
function readProject(tsconfig) {
  const parsed = ts.getParsedCommandLineOfConfigFile(tsconfig, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic });
  if (parsed.errors.length > 0) throw new Error(ts.formatDiagnostics(parsed.errors, formatHost));
  return { files: parsed.fileNames.map((file) => realpathSync(file)), options: parsed.options };
}

const formatHost = {
  getCanonicalFileName: (file) => file,
  getCurrentDirectory: () => process.cwd(),
  getNewLine: () => '\n',
};

function onUnRecoverableConfigFileDiagnostic(diagnostic) {
  throw new Error(ts.formatDiagnostics([diagnostic], formatHost));
}

/** Each file's imports that resolve to another file of the project: file → Set of files. */
function importGraph(tsconfig) {
  const { files, options } = readProject(tsconfig);
  const known = new Set(files);
  const cache = ts.createModuleResolutionCache(path.dirname(tsconfig), (file) => file, options);
  const graph = new Map();
  for (const file of files) {
    const mode = ts.getImpliedNodeFormatForFile(file, cache.getPackageJsonInfoCache(), ts.sys, options);
    const imports = new Set();
    for (const { fileName: specifier } of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
      const resolved = ts.resolveModuleName(specifier, file, options, ts.sys, cache, undefined, mode).resolvedModule;
      // A workspace package resolves (through its symlink in node_modules) to its sources: an edge like any other.
      const target = resolved?.resolvedFileName;
      if (target && known.has(target) && target !== file) imports.add(target);
    }
    graph.set(file, imports);
  }
  return graph;
}

/** The strongly connected components of more than one node (Tarjan's algorithm, iterative). */
function tangles(graph) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  let next = 0;
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work = [[start, [...(graph.get(start) ?? [])], 0]];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const [node, targets] = frame;
      if (frame[2] < targets.length) {
        const target = targets[frame[2]++];
        if (!index.has(target)) {
          index.set(target, next);
          low.set(target, next++);
          stack.push(target);
          onStack.add(target);
          work.push([target, [...(graph.get(target) ?? [])], 0]);
        } else if (onStack.has(target)) low.set(node, Math.min(low.get(node), index.get(target)));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent), low.get(node)));
      }
      if (low.get(node) !== index.get(node)) continue;
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(new Set(component));
    }
  }
  return found;
}

/** The shortest path from `from` to `to` inside `members`, both ends included. */
function shortestPath(graph, members, from, to) {
  const previous = new Map([[from, undefined]]);
  const queue = [from];
  while (queue.length > 0) {
    const node = queue.shift();
    if (node === to) break;
    for (const target of [...(graph.get(node) ?? [])].sort()) {
      if (!members.has(target) || previous.has(target)) continue;
      previous.set(target, node);
      queue.push(target);
    }
  }
  const chain = [];
  for (let node = to; node !== undefined; node = previous.get(node)) chain.unshift(node);
  return chain;
}

/**
 * The loops of a graph, each as the chain of nodes that closes it (first node repeated at the end): within each
 * tangle, loops are added until every edge inside it is in one, so every import that takes part in a loop is
 * shown, and a tangle with many loops does not print all of its (exponentially many) paths.
 */
function loops(graph) {
  const found = [];
  for (const members of tangles(graph)) {
    const covered = new Set();
    for (const from of [...members].sort())
      for (const to of [...graph.get(from)].sort()) {
        if (!members.has(to) || covered.has(`${from}\0${to}`)) continue;
        const chain = [from, ...shortestPath(graph, members, to, from)];
        chain.slice(1).forEach((node, at) => covered.add(`${chain[at]}\0${node}`));
        found.push(chain);
      }
  }
  return found;
}

/** The src/ folder of the package a file belongs to (a directory with a package.json), if the file is in it. */
function packageSource(file, packages) {
  for (let dir = path.dirname(file); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (!packages.has(dir)) packages.set(dir, existsSync(path.join(dir, 'package.json')));
    if (!packages.get(dir)) continue;
    const src = path.join(dir, 'src');
    return file.startsWith(`${src}${path.sep}`) ? src : undefined;
  }
  return undefined;
}

/** The folders from src/ down to a file's own: [] for a file in src/ itself. */
const folderPath = (src, file) => path.relative(src, path.dirname(file)).split(path.sep).filter(Boolean);

/**
 * The folder graph within each package's src/: an import between files under two sibling folders is an edge
 * between the siblings. Folder → Map of folder → the import that makes the edge (the first one, sorted).
 */
function folderGraph(files) {
  const packages = new Map();
  const graph = new Map();
  for (const [file, imports] of [...files].sort(([a], [b]) => a.localeCompare(b))) {
    const src = packageSource(file, packages);
    if (!src) continue;
    const from = folderPath(src, file);
    for (const target of [...imports].sort()) {
      if (packageSource(target, packages) !== src) continue;
      const to = folderPath(src, target);
      let shared = 0;
      while (shared < from.length && shared < to.length && from[shared] === to[shared]) shared++;
      // The same folder, or one holds the other: no edge between siblings.
      if (shared === from.length || shared === to.length) continue;
      const folder = (parts) => path.join(src, ...parts.slice(0, shared + 1));
      const edges = graph.get(folder(from)) ?? new Map();
      if (!edges.has(folder(to))) edges.set(folder(to), [file, target]);
      graph.set(folder(from), edges);
    }
  }
  return graph;
}

/** Every file loop and folder loop of the project of `tsconfig`, as text lines relative to `root`. */
export function importCycles(tsconfig, root = path.dirname(tsconfig)) {
  const files = importGraph(tsconfig);
  const folders = folderGraph(files);
  const name = (file) => path.relative(root, file);
  const problems = loops(files).map((chain) => `file loop: ${chain.map(name).join(' → ')}`);
  const plain = new Map([...folders].map(([folder, edges]) => [folder, new Set(edges.keys())]));
  for (const chain of loops(plain)) {
    const through = chain.slice(1).map((folder, at) => folders.get(chain[at]).get(folder).map(name).join(' → '));
    problems.push(`folder loop: ${chain.map(name).join(' → ')} (${through.join('; ')})`);
  }
  return problems;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const problems = importCycles(path.join(root, 'tsconfig.json'), root);
  for (const problem of problems) process.stderr.write(`${problem}\n`);
  if (problems.length > 0) {
    process.stderr.write(`${problems.length} import loop(s): move what both sides need to where both can import it\n`);
    process.exit(1);
  }
}
