import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { freePort } from '@frequency-gateway/devstack';

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const BUILT_MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

/** The api as a process of its own (as deployed), so its memory can be read apart from the client's. */
export interface ApiProcess {
  url: string;
  pid: number;
  /** Resident set size now and at its peak (VmRSS, VmHWM), in bytes. */
  memory(): { rss: number; peak: number };
  /** Starts a new peak from the current RSS (Linux clear_refs), so the next peak measures what follows. */
  resetPeak(): void;
  /** SIGTERM (a clean stop, the default) or SIGKILL (a crash); resolves when it has exited. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

function statusField(pid: number, field: string): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith(`${field}:`));
  return Number(/(\d+) kB/.exec(line ?? '')?.[1] ?? NaN) * 1024;
}

/** The api from its sources, or (`compiled`) from dist/ as the image runs it (after `make build`). */
export function spawnApi(env: Record<string, string>, options: { compiled?: boolean } = {}): Promise<ApiProcess> {
  return options.compiled ? spawnServer([BUILT_MAIN, 'api'], env, { node: [] }) : spawnServer([MAIN, 'api'], env);
}

/** The worker from its sources, its health port on a free port. */
export function spawnWorker(env: Record<string, string>): Promise<ApiProcess> {
  return spawnServer([MAIN, 'worker'], env, { portVariable: 'WORKER_API_PORT' });
}

/**
 * Runs an HTTP server (TypeScript through tsx unless other `node` options are given) as a child process on a
 * free port (given as `portVariable`, API_PORT by default) and resolves once its /livez answers.
 */
export async function spawnServer(
  args: string[],
  env: Record<string, string>,
  options: { node?: string[]; portVariable?: string } = {},
): Promise<ApiProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [...(options.node ?? ['--import', 'tsx', '--conditions=source']), ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env, [options.portVariable ?? 'API_PORT']: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited with ${child.exitCode}`);
    const live = await fetch(`${url}/livez`).then(
      (response) => response.ok,
      () => false,
    );
    if (live) break;
    if (Date.now() > deadline) throw new Error(`${args.join(' ')} did not start within 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const pid = child.pid as number;
  return {
    url,
    pid,
    memory: () => ({ rss: statusField(pid, 'VmRSS'), peak: statusField(pid, 'VmHWM') }),
    resetPeak: () => writeFileSync(`/proc/${pid}/clear_refs`, '5'),
    stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/** `total` bytes of deterministic content, generated in 64 KiB chunks (never held whole). */
export async function* generatedBytes(total: number): AsyncGenerator<Uint8Array> {
  const size = 64 * 1024;
  for (let at = 0, n = 0; at < total; at += size, n++) {
    const chunk = new Uint8Array(Math.min(size, total - at)).fill(n % 251);
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
  options: { path?: string; method?: string; type?: string; abortAfter?: number } = {},
): Promise<{ status: number; text: string }> {
  const boundary = 'stream-upload-boundary';
  async function* body() {
    yield Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="big"\r\nContent-Type: ${options.type ?? 'video/mp4'}\r\n\r\n`,
    );
    yield* generatedBytes(options.abortAfter ?? total);
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
