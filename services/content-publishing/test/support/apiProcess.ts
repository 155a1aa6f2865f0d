import { request, type ClientRequest } from 'node:http';

/** Node arguments of a benchmark's process from a variable, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" (Node refuses those in NODE_OPTIONS). */
export function nodeArgsFrom(variable: string): string[] {
  return (process.env[variable] ?? '').split(/\s+/).filter(Boolean);
}

/** `total` bytes of deterministic content (another for another `seed`), generated in 64 KiB chunks (never held whole). */
export async function* generatedBytes(total: number, seed = 0): AsyncGenerator<Uint8Array> {
  const size = 64 * 1024;
  for (let at = 0, n = 0; at < total; at += size, n++) {
    const chunk = new Uint8Array(Math.min(size, total - at)).fill((n + seed) % 251);
    new DataView(chunk.buffer).setUint32(0, n);
    yield chunk;
  }
}

/** One part of a multipart/form-data body: a file (with a filename) or a text field. */
export interface FormPart {
  name: string;
  filename?: string;
  type?: string;
  content: AsyncIterable<Uint8Array> | Uint8Array | string;
}

export const FORM_BOUNDARY = 'stream-upload-boundary';

/** A multipart/form-data body written part by part (never held whole); `end: false` leaves it unfinished. */
export async function* multipartBody(parts: Iterable<FormPart>, options: { end?: boolean } = {}) {
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename === undefined ? '' : `; filename="${part.filename}"`}`;
    const type = part.type === undefined ? '' : `Content-Type: ${part.type}\r\n`;
    yield Buffer.from(`--${FORM_BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n${type}\r\n`);
    if (typeof part.content === 'string') yield Buffer.from(part.content);
    else if (part.content instanceof Uint8Array) yield part.content;
    else yield* part.content;
    yield Buffer.from('\r\n');
  }
  if (options.end !== false) yield Buffer.from(`--${FORM_BOUNDARY}--\r\n`);
}

/** Resolves when the request can take more body, or has an answer, or is closed. */
function writable(req: ClientRequest): Promise<void> {
  return new Promise((resolve) => {
    const events = ['drain', 'response', 'close'] as const;
    const done = () => {
      for (const event of events) req.off(event, done);
      resolve();
    };
    for (const event of events) req.on(event, done);
  });
}

/** What a streamed request came to: the answer, and how much of the body the client got to send before it. */
export interface StreamedAnswer {
  status: number;
  text: string;
  /** Body bytes handed to the socket by the time the answer arrived (or the body ended). */
  sent: number;
  /** Milliseconds from the first byte sent to the end of the answer. */
  ms: number;
}

/**
 * Sends a multipart body without buffering it, as a client that stops sending once it has an answer (curl and
 * browsers do): a server that answers early is not made to read the rest. With `abortAfter`, the connection is
 * cut after that many body bytes, as a client that loses its connection does.
 */
export function sendMultipart(
  url: string,
  body: AsyncIterable<Uint8Array>,
  options: { path?: string; method?: string; abortAfter?: number; headers?: Record<string, string> } = {},
): Promise<StreamedAnswer> {
  const started = Date.now();
  let sent = 0;
  let answered = false;
  return new Promise((resolve, reject) => {
    const req = request(`${url}${options.path ?? '/v2/asset/upload'}`, {
      method: options.method ?? 'POST',
      headers: {
        'content-type': `multipart/form-data; boundary=${FORM_BOUNDARY}`,
        'transfer-encoding': 'chunked',
        ...options.headers,
      },
    });
    req.once('response', (response) => {
      answered = true;
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.once('end', () => {
        // A body cut short by the answer cannot be finished: let the connection go.
        if (!req.writableEnded) req.destroy();
        resolve({ status: response.statusCode ?? 0, text, sent, ms: Date.now() - started });
      });
      response.once('error', reject);
    });
    // Once answered, a server that stops reading may close the connection while the client still sends.
    req.once('error', (error) => (answered || options.abortAfter !== undefined ? undefined : reject(error)));
    (async () => {
      for await (const chunk of body) {
        if (answered || req.destroyed) return;
        if (options.abortAfter !== undefined && sent + chunk.byteLength > options.abortAfter) {
          // Go away mid-body, as a client that loses its connection does.
          await new Promise((done) => setTimeout(done, 200));
          req.destroy();
          resolve({ status: 0, text: '', sent, ms: Date.now() - started });
          return;
        }
        sent += chunk.byteLength;
        if (!req.write(chunk)) await writable(req);
      }
      if (!answered && !req.destroyed) req.end();
    })().catch((error: unknown) => (answered ? undefined : reject(error)));
  });
}

/**
 * Streams one multipart file part of `total` generated bytes to an upload route; resolves with the answer.
 * With `abortAfter`, the request is cut after that many bytes of the body.
 */
export function streamUpload(
  url: string,
  total: number,
  options: { path?: string; method?: string; type?: string; abortAfter?: number; seed?: number } = {},
): Promise<StreamedAnswer> {
  const file = {
    name: 'files',
    filename: 'big',
    type: options.type ?? 'video/mp4',
    content: generatedBytes(total, options.seed),
  };
  return sendMultipart(url, multipartBody([file], { end: options.abortAfter === undefined }), options);
}
