// Whether the guarantees page cites tests that exist. A guarantee is a level-2 heading `## (a) …` of
// docs/guarantees.md; its section runs to the next heading of level 1 or 2. A citation is a list item of the form
//   - `path/from/the/root.test.ts` › the test's name
// (the name as its `test(`/`it(` call spells it, without quotes). Each guarantee cites at least one test; each cited
// file is a file of the repository, and declares a test (`test`, `it`, `.only`, `.concurrent`, `.failing`, `.each`;
// not `.skip` or `.todo`, which prove nothing) whose name is the cited one.
//
// Names that are built: a `test.each`/`it.each` name stands for every name jest makes of it, so its placeholders
// (`%s`, `%d`, `%i`, `%f`, `%j`, `%o`, `%O`, `%p`, `%#` and `$variable` or `$variable.path`; `%%` is a percent sign)
// and a template literal's `${…}` each match any non-empty text. A cited name matches a test when it is the name
// as written (placeholders included: `400 naming the field: %s`) or one of the names it stands for
// (`400 naming the field: profile missing`).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import type { MarkdownFile } from './markdownText.js';
import type { DocsProblem } from './problem.js';
import type { RepositoryIndex } from './repositoryIndex.js';

export const GUARANTEES_PAGE = 'docs/guarantees.md';

const GUARANTEE = /^## (\([a-z]\))\s/;
const SECTION_END = /^#{1,2}\s/;
const CITATION = /^\s*[-*]\s+`([^`]+)`\s+›\s+(.+?)\s*$/;

export interface Citation {
  line: number;
  /** From the repository root. */
  file: string;
  name: string;
}

export interface Guarantee {
  line: number;
  /** `(a)`, `(b)`, … */
  label: string;
  citations: Citation[];
}

/** The guarantees of the page and the tests each one cites (fenced lines are not read). */
export function guaranteesOf(file: MarkdownFile): Guarantee[] {
  const guarantees: Guarantee[] = [];
  let current: Guarantee | undefined;
  file.lines.forEach((text, index) => {
    if (file.fenced[index]) return;
    const line = index + 1;
    const label = GUARANTEE.exec(text)?.[1];
    if (label !== undefined) guarantees.push((current = { line, label, citations: [] }));
    else if (SECTION_END.test(text)) current = undefined;
    else {
      const cited = CITATION.exec(text);
      if (cited && current) current.citations.push({ line, file: cited[1]!, name: cited[2]! });
    }
  });
  return guarantees;
}

/** A test a file declares: its name as written, and what names it stands for. */
export interface DeclaredTest {
  name: string;
  pattern: RegExp;
}

const TEST_FUNCTIONS = new Set(['test', 'it']);
const MODIFIERS = new Set(['only', 'concurrent', 'failing']);
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** jest's placeholders in an `.each` name (printf-style, and `$name` for tables and objects). */
const PLACEHOLDER = /%%|%[sdifjoOp#]|\$[A-Za-z_]\w*(?:\.\w+)*/g;

/** `test`, `it.only`, `test.concurrent.each`: whether the callee is a test function, and an `.each` one. */
function testFunction(callee: ts.Expression): { each: boolean } | undefined {
  const names: string[] = [];
  let node: ts.Expression = callee;
  while (ts.isPropertyAccessExpression(node)) {
    names.unshift(node.name.text);
    node = node.expression;
  }
  if (!ts.isIdentifier(node) || !TEST_FUNCTIONS.has(node.text)) return undefined;
  const each = names.at(-1) === 'each';
  const modifiers = each ? names.slice(0, -1) : names;
  return modifiers.every((name) => MODIFIERS.has(name)) ? { each } : undefined;
}

/** A name's literal parts with a wildcard between each two (a template's `${…}`), as written and as a pattern. */
function declared(parts: string[], written: string, each: boolean): DeclaredTest {
  const literal = (text: string) => {
    if (!each) return escape(text);
    const placeholders = text.match(PLACEHOLDER) ?? [];
    return text
      .split(PLACEHOLDER)
      .map((piece, at) => (at === 0 ? '' : placeholders[at - 1] === '%%' ? '%' : '.+') + escape(piece))
      .join('');
  };
  return { name: written, pattern: new RegExp(`^${parts.map(literal).join('.+')}$`, 's') };
}

function nameOf(argument: ts.Expression | undefined, source: ts.SourceFile, each: boolean): DeclaredTest | undefined {
  if (argument && (ts.isStringLiteral(argument) || ts.isNoSubstitutionTemplateLiteral(argument)))
    return declared([argument.text], argument.text, each);
  if (argument && ts.isTemplateExpression(argument)) {
    const parts = [argument.head.text, ...argument.templateSpans.map((span) => span.literal.text)];
    return declared(parts, argument.getText(source).slice(1, -1), each);
  }
  return undefined;
}

/** Every test a TypeScript test file declares (a name that is not a literal or a template cannot be cited). */
export function declaredTests(source: string, fileName = 'test.ts'): DeclaredTest[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: DeclaredTest[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node)) {
      const { expression } = node;
      // test.each(table)('name', fn) and test.each`table`('name', fn): the callee is itself a call or a tag.
      const inner = ts.isCallExpression(expression)
        ? expression.expression
        : ts.isTaggedTemplateExpression(expression)
          ? expression.tag
          : undefined;
      const called = inner ? testFunction(inner) : testFunction(expression);
      if (called && called.each === (inner !== undefined)) {
        const test = nameOf(node.arguments[0], file, called.each);
        if (test) found.push(test);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

const cites = (test: DeclaredTest, name: string) => test.name === name || test.pattern.test(name);

/** What is wrong with the guarantees page: a guarantee without a test, a cited file or test that does not exist. */
export function guaranteeCitationProblems(file: MarkdownFile, root: string, index: RepositoryIndex): DocsProblem[] {
  const problems: DocsProblem[] = [];
  const report = (line: number, message: string) => problems.push({ file: file.path, line, message });
  const testsOf = new Map<string, DeclaredTest[]>();
  for (const { line, label, citations } of guaranteesOf(file)) {
    if (citations.length === 0) report(line, `guarantee ${label} cites no test`);
    for (const { line: at, file: cited, name } of citations) {
      if (!index.files.has(cited)) {
        report(at, `guarantee ${label} cites \`${cited}\`: no such file`);
        continue;
      }
      if (!testsOf.has(cited)) testsOf.set(cited, declaredTests(readFileSync(join(root, cited), 'utf8'), cited));
      if (!testsOf.get(cited)!.some((test) => cites(test, name)))
        report(at, `guarantee ${label} cites \`${cited}\` › ${name}: no test of that name in it`);
    }
  }
  return problems;
}
