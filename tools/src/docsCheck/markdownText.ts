// How the docs check reads a Markdown file: which lines are fenced code or generated, the inline code spans, the
// link targets and the anchors its headings make. Enough of CommonMark for the repository's own files, not all
// of it (no indented code blocks, no setext headings, no nested brackets in link text).

/** A text found on a line of a Markdown file (line numbers from 1). */
export interface Located {
  line: number;
  text: string;
}

export interface MarkdownFile {
  /** From the repository root, with forward slashes. */
  path: string;
  lines: string[];
  /** Per line (from 0): a fence or inside a fenced code block. */
  fenced: boolean[];
  /** Per line: between `<!-- NAME:start -->` and `<!-- NAME:end -->`, the markers included. */
  generated: boolean[];
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const GENERATED_START = /<!--\s*([\w-]+):start\s*-->/;

export function readMarkdown(path: string, text: string): MarkdownFile {
  const lines = text.split('\n');
  const fenced: boolean[] = [];
  const generated: boolean[] = [];
  let fence: string | undefined;
  let region: string | undefined;
  for (const line of lines) {
    const marker = FENCE.exec(line)?.[1];
    if (fence === undefined && marker) {
      fence = marker;
      fenced.push(true);
    } else if (fence !== undefined) {
      fenced.push(true);
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker)
        fence = undefined;
    } else fenced.push(false);
    const start = GENERATED_START.exec(line)?.[1];
    if (region === undefined && start) region = start;
    generated.push(region !== undefined);
    if (region !== undefined && new RegExp(`<!--\\s*${region}:end\\s*-->`).test(line)) region = undefined;
  }
  return { path, lines, fenced, generated };
}

/** The file with its fenced lines blanked (line numbers kept): what is prose and inline code. */
function proseOf(file: MarkdownFile): string {
  return file.lines.map((line, index) => (file.fenced[index] ? '' : line)).join('\n');
}

const lineAt = (text: string, offset: number) => text.slice(0, offset).split('\n').length;

/** Inline code spans, a run of n backticks to the next run of exactly n, never across a blank line. */
const CODE_SPAN = /(?<!`)(`+)(?!`)((?:(?!\n\s*\n)[\s\S])*?[^`])\1(?!`)/g;

export function codeSpans(file: MarkdownFile): Located[] {
  const prose = proseOf(file);
  return [...prose.matchAll(CODE_SPAN)].map((match) => ({
    line: lineAt(prose, match.index),
    text: match[2]!.replaceAll('\n', ' ').trim(),
  }));
}

/** Each line inside a fenced code block (not the fences themselves). */
export function fencedLines(file: MarkdownFile): Located[] {
  return file.lines
    .map((text, index) => ({ line: index + 1, text }))
    .filter(({ line, text }) => file.fenced[line - 1] && !FENCE.test(text));
}

const INLINE_LINK = /!?\[(?:[^\][]|\[[^\]]*\])*\]\(\s*<?([^\s)>]*)>?[^)]*\)/g;
const REFERENCE_DEFINITION = /^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?/gm;

/** The target of every inline link, image and link reference definition outside code. */
export function linkTargets(file: MarkdownFile): Located[] {
  const prose = proseOf(file).replace(CODE_SPAN, (span) => span.replace(/[^\n]/g, ' '));
  return [...prose.matchAll(INLINE_LINK), ...prose.matchAll(REFERENCE_DEFINITION)]
    .map((match) => ({ line: lineAt(prose, match.index), text: match[1]! }))
    .filter(({ text }) => text !== '')
    .sort((a, b) => a.line - b.line);
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, each space a hyphen. */
export function headingAnchor(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replaceAll('`', '');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replaceAll(' ', '-');
}

/** Every anchor a link into this file may name: its headings' (repeated ones numbered) and HTML ids and names. */
export function anchors(file: MarkdownFile): Set<string> {
  const found = new Set<string>();
  const seen = new Map<string, number>();
  file.lines.forEach((line, index) => {
    if (file.fenced[index]) return;
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line)?.[1];
    if (heading !== undefined) {
      const anchor = headingAnchor(heading);
      const count = seen.get(anchor) ?? 0;
      seen.set(anchor, count + 1);
      found.add(count === 0 ? anchor : `${anchor}-${count}`);
    }
    for (const match of line.matchAll(/<a\s[^>]*(?:id|name)="([^"]+)"/g)) found.add(match[1]!);
  });
  return found;
}
