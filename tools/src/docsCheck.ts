// The docs check (`make docs-check`; part of `make test` through tools/test/docsCheck.test.ts). It reads every
// Markdown file of the repository (tracked by git or new and not ignored; none under node_modules), generated
// ones included, and reports, each at its file and line:
// - a README over its budget: the root README.md 120 lines, every other README.md 400 words; fenced code counts,
//   generated tables (between `<!-- NAME:start -->` and `<!-- NAME:end -->`) do not (docsCheck/wordBudgets.ts);
// - a relative link whose file or folder does not exist, or whose anchor names no heading of the Markdown file
//   it points into;
// - a repository path in an inline code span that resolves to nothing, from the Markdown file's folder, the root,
//   or as the end of a longer path, wildcards expanded (docsCheck/pathReferences.ts says what counts as a path:
//   no spaces, placeholders, colons, absolute paths or build output). A path of another project is written with
//   that project's name and a colon (`frequency:e2e/capacity/staking.test.ts`), which takes it out of the check;
// - a `make TARGET` in code (an inline span or a fenced block) that the Makefile lacks, and an `npm run SCRIPT`
//   (`npm test`, `npm start`) that the root package.json lacks, or the workspace's with `-w WORKSPACE`;
// - on docs/guarantees.md, a guarantee that cites no test, or cites a file or a test name that does not exist
//   (docsCheck/guaranteeCitations.ts says how a guarantee and a citation are written).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  commandsOf,
  makeCommandTargets,
  makeTargets,
  npmScriptProblem,
  Packages,
} from './docsCheck/commandReferences.js';
import {
  anchors,
  codeSpans,
  fencedLines,
  linkTargets,
  readMarkdown,
  type MarkdownFile,
} from './docsCheck/markdownText.js';
import { linkProblem, pathResolves, repositoryPathIn } from './docsCheck/pathReferences.js';
import { GUARANTEES_PAGE, guaranteeCitationProblems } from './docsCheck/guaranteeCitations.js';
import { formatProblem, type DocsProblem } from './docsCheck/problem.js';
import { RepositoryIndex } from './docsCheck/repositoryIndex.js';
import { wordBudgetProblems } from './docsCheck/wordBudgets.js';

/** The repository this file is in (not components.ts's: that one loads every service). */
const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));

export function checkDocs(root: string = repositoryRoot): DocsProblem[] {
  const index = RepositoryIndex.fromGit(root);
  const markdown = new Map<string, MarkdownFile>();
  for (const path of [...index.files].filter((file) => file.endsWith('.md')).sort())
    markdown.set(path, readMarkdown(path, readFileSync(join(root, path), 'utf8')));
  const anchorsOf = new Map<string, ReadonlySet<string>>();
  const anchorsIn = (path: string) => {
    const file = markdown.get(path);
    if (file && !anchorsOf.has(path)) anchorsOf.set(path, anchors(file));
    return anchorsOf.get(path);
  };
  const targets = makeTargets(index.has('Makefile') ? readFileSync(join(root, 'Makefile'), 'utf8') : '');
  const packages = Packages.read(root, index);

  const problems: DocsProblem[] = [];
  for (const file of markdown.values()) {
    const report = (line: number, message: string) => problems.push({ file: file.path, line, message });
    problems.push(...wordBudgetProblems(file));
    if (file.path === GUARANTEES_PAGE) problems.push(...guaranteeCitationProblems(file, root, index));
    for (const { line, text } of linkTargets(file)) {
      const problem = linkProblem(text, file.path, index, anchorsIn);
      if (problem) report(line, problem);
    }
    const spans = codeSpans(file);
    for (const { line, text } of spans) {
      const path = repositoryPathIn(text);
      if (path !== undefined && !pathResolves(path, file.path, index))
        report(line, `\`${text}\`: no such file or folder`);
    }
    for (const { line, text } of [...spans, ...fencedLines(file)].sort((a, b) => a.line - b.line)) {
      for (const words of commandsOf(text, 'make'))
        for (const target of makeCommandTargets(words))
          if (!targets.has(target)) report(line, `make ${target}: no such target in the Makefile`);
      for (const words of commandsOf(text, 'npm')) {
        const problem = npmScriptProblem(words, packages);
        if (problem) report(line, `npm ${words.join(' ')}: ${problem}`);
      }
    }
  }
  return problems.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
}

export const formatProblems = (problems: DocsProblem[]) => problems.map(formatProblem).join('\n');

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const problems = checkDocs();
  if (problems.length > 0) {
    process.stderr.write(`${formatProblems(problems)}\n${problems.length} problems in the docs\n`);
    process.exit(1);
  }
  process.stdout.write('docs check: no problems\n');
}
