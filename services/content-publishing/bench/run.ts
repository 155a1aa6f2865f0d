// Upload benchmark: a large file through POST /v2/asset/upload against adding the same bytes to the same kind of
// store directly, in one run; plus the api process's peak RSS growth while the upload streams through it.
import { request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { startRedisServer } from '@frequency-gateway/devstack';
import { startComponent } from '@frequency-gateway/platform';
import { EmbeddedStore } from '@frequency-gateway/storage';
import { contentPublishingApi } from '../src/api/component.js';

const TOTAL = Number(process.env.BENCH_BYTES ?? 1024 ** 3);
const CHUNK = 64 * 1024;
const MiB = 1024 * 1024;

async function* source(): AsyncGenerator<Uint8Array> {
  for (let at = 0, n = 0; at < TOTAL; at += CHUNK, n++) {
    const chunk = new Uint8Array(Math.min(CHUNK, TOTAL - at)).fill(n % 251);
    new DataView(chunk.buffer).setUint32(0, n);
    yield chunk;
  }
}

const line = (name: string, value: string) => process.stdout.write(`${name.padEnd(50)}${value}\n`);

async function sampled<T>(run: () => Promise<T>) {
  globalThis.gc?.();
  const before = process.memoryUsage().rss;
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
  const started = performance.now();
  const result = await run();
  clearInterval(timer);
  return { result, seconds: (performance.now() - started) / 1000, rssGrowth: peak - before };
}

/** Streams one multipart file part to the api without buffering it. */
function upload(url: string): Promise<string> {
  const boundary = 'bench-boundary';
  async function* body() {
    yield Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="big.mp4"\r\nContent-Type: video/mp4\r\n\r\n`,
    );
    yield* source();
    yield Buffer.from(`\r\n--${boundary}--\r\n`);
  }
  return new Promise((resolve, reject) => {
    const req = request(`${url}/v2/asset/upload`, {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'transfer-encoding': 'chunked' },
    });
    req.once('response', (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.once('end', () => resolve(text));
    });
    req.once('error', reject);
    pipeline(Readable.from(body()), req).catch(reject);
  });
}

const redis = await startRedisServer();
const apiDir = mkdtempSync(join(tmpdir(), 'upload-bench-api-'));
const directDir = mkdtempSync(join(tmpdir(), 'upload-bench-direct-'));
const api = await startComponent(contentPublishingApi, {
  env: { REDIS_URL: redis.url, IPFS_EMBEDDED_DIR: apiDir, FILE_UPLOAD_MAX_SIZE_IN_BYTES: String(TOTAL + 1) },
  port: 0,
  logDestination: new PassThrough().resume(),
});
const direct = new EmbeddedStore(directDir);
const baseline = await sampled(() => direct.add(source()));
const viaApi = await sampled(() => upload(api.url));
line(
  `upload of ${(TOTAL / MiB).toFixed(0)} MiB, baseline: store.add directly`,
  `${(TOTAL / MiB / baseline.seconds).toFixed(0)} MiB/s`,
);
line('through POST /v2/asset/upload', `${(TOTAL / MiB / viaApi.seconds).toFixed(0)} MiB/s`);
line('ratio api / direct throughput (goal ≥ 0.8)', (baseline.seconds / viaApi.seconds).toFixed(2));
line('peak RSS growth, direct', `${(baseline.rssGrowth / MiB).toFixed(1)} MiB`);
line('peak RSS growth, through the api (goal < 64 MiB)', `${(viaApi.rssGrowth / MiB).toFixed(1)} MiB`);
line('answer', viaApi.result.slice(0, 120));
await direct.close();
await api.stop();
await redis.stop();
rmSync(apiDir, { recursive: true, force: true });
rmSync(directDir, { recursive: true, force: true });
process.exit(0);
