/** One thing the docs check found wrong, at a line of a Markdown file. */
export interface DocsProblem {
  /** From the repository root. */
  file: string;
  line: number;
  message: string;
}

export const formatProblem = ({ file, line, message }: DocsProblem) => `${file}:${line}: ${message}`;
