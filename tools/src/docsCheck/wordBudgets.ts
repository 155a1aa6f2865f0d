// How long a README may be. The root README.md: at most 120 lines, all of them. Every other README.md: at most
// 400 words, fenced code included; what lies between generated markers (`<!-- values:start -->` …
// `<!-- values:end -->`, the chart's values table) is not counted, nor are the markers. A word is a run of
// non-space characters with a letter or digit in it (a table's pipes and rules are not words).
import type { MarkdownFile } from './markdownText.js';
import type { DocsProblem } from './problem.js';

export const ROOT_README_LINES = 120;
export const README_WORDS = 400;

const isReadme = (path: string) => path === 'README.md' || path.endsWith('/README.md');

/** The lines of a file as it is counted: a trailing newline makes no line. */
const countedLines = (file: MarkdownFile) => (file.lines.at(-1) === '' ? file.lines.slice(0, -1) : file.lines);

export function wordBudgetProblems(file: MarkdownFile): DocsProblem[] {
  if (!isReadme(file.path)) return [];
  if (file.path === 'README.md') {
    const lines = countedLines(file).length;
    return lines > ROOT_README_LINES
      ? [
          {
            file: file.path,
            line: ROOT_README_LINES + 1,
            message: `${lines} lines; the root README has at most ${ROOT_README_LINES}`,
          },
        ]
      : [];
  }
  let words = 0;
  let overAt: number | undefined;
  file.lines.forEach((line, index) => {
    if (file.generated[index]) return;
    words += line.split(/\s+/).filter((word) => /[\p{L}\p{N}]/u.test(word)).length;
    if (words > README_WORDS && overAt === undefined) overAt = index + 1;
  });
  return overAt === undefined
    ? []
    : [
        {
          file: file.path,
          line: overAt,
          message: `${words} words; a README has at most ${README_WORDS} (generated tables aside)`,
        },
      ];
}
