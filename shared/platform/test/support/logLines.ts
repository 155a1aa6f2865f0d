import { PassThrough } from 'node:stream';

/** A stream to give a logger as its destination, and the JSON lines written to it, parsed. */
export function captureLogLines() {
  const stream = new PassThrough();
  const lines: Record<string, unknown>[] = [];
  stream.on('data', (chunk: Buffer) =>
    lines.push(
      ...chunk
        .toString()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    ),
  );
  return { stream, lines };
}
