import { request } from 'node:http';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { spawnServer, type ServerProcess } from '@frequency-gateway/devstack';

export { spawnServer, type ServerProcess as ApiProcess } from '@frequency-gateway/devstack';
type ApiProcess = ServerProcess;

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const BUILT_MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

/** Node arguments of a benchmark's process from a variable, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" (Node refuses those in NODE_OPTIONS). */
export function nodeArgsFrom(variable: string): string[] {
  return (process.env[variable] ?? '').split(/\s+/).filter(Boolean);
}

export interface ComponentProcessOptions {
  /** From dist/ as the image runs it (after `make build`), instead of the sources through tsx. */
  compiled?: boolean;
  /** More Node arguments. */
  nodeArgs?: string[];
}

function spawnComponent(
  role: 'api' | 'worker',
  env: Record<string, string>,
  options: ComponentProcessOptions,
): Promise<ApiProcess> {
  const node = options.compiled ? [] : ['--import', 'tsx', '--conditions=source'];
  return spawnServer([options.compiled ? BUILT_MAIN : MAIN, role], env, {
    node: [...node, ...(options.nodeArgs ?? [])],
    ...(role === 'worker' ? { portVariable: 'WORKER_API_PORT' } : {}),
  });
}

/** The api as a process of its own. */
export function spawnApi(env: Record<string, string>, options: ComponentProcessOptions = {}): Promise<ApiProcess> {
  return spawnComponent('api', env, options);
}

/** The worker as a process of its own, its health port on a free port. */
export function spawnWorker(env: Record<string, string>, options: ComponentProcessOptions = {}): Promise<ApiProcess> {
  return spawnComponent('worker', env, options);
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

/**
 * Streams one multipart file part to an upload route without buffering it; resolves with the status and body.
 * With `abortAfter`, the request is cut after that many bytes of the file.
 */
export function streamUpload(
  url: string,
  total: number,
  options: { path?: string; method?: string; type?: string; abortAfter?: number; seed?: number } = {},
): Promise<{ status: number; text: string }> {
  const boundary = 'stream-upload-boundary';
  async function* body() {
    yield Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="big"\r\nContent-Type: ${options.type ?? 'video/mp4'}\r\n\r\n`,
    );
    yield* generatedBytes(options.abortAfter ?? total, options.seed);
    if (options.abortAfter === undefined) yield Buffer.from(`\r\n--${boundary}--\r\n`);
  }
  return new Promise((resolve, reject) => {
    const req = request(`${url}${options.path ?? '/v2/asset/upload'}`, {
      method: options.method ?? 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'transfer-encoding': 'chunked' },
    });
    req.once('response', (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.once('end', () => resolve({ status: response.statusCode ?? 0, text }));
    });
    req.once('error', (error) => (options.abortAfter === undefined ? reject(error) : undefined));
    (async () => {
      for await (const chunk of body()) if (!req.write(chunk)) await once(req, 'drain');
      if (options.abortAfter === undefined) return req.end();
      // Go away mid-part, as a client that loses its connection does.
      await new Promise((done) => setTimeout(done, 200));
      req.destroy();
      resolve({ status: 0, text: '' });
    })().catch(reject);
  });
}
