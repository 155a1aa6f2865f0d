// Streaming benchmark: add a large stream to each store while sampling memory; every figure is reported
// against a baseline measured in the same run (hashing the same stream without storing it). Printed, and written
// to docs/measurements/storage-streaming.json.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BenchmarkFigure, printFigure, startKubo, writeBenchmarkResult } from '@frequency-gateway/devstack';
import { EmbeddedStore, KuboStore, type ContentStore } from '../src/index.js';

const TOTAL = Number(process.env.BENCH_BYTES ?? 1024 ** 3);
const CHUNK = 64 * 1024;
const MiB = 1024 * 1024;

/** TOTAL bytes in 64 KiB chunks, each different (a counter stamped into a fixed pattern). */
async function* source(): AsyncGenerator<Uint8Array> {
  const pattern = createHash('sha512').update('bench').digest();
  for (let at = 0, n = 0; at < TOTAL; at += CHUNK, n++) {
    const chunk = new Uint8Array(Math.min(CHUNK, TOTAL - at));
    for (let i = 0; i < chunk.length; i += pattern.length) chunk.set(pattern.subarray(0, chunk.length - i), i);
    new DataView(chunk.buffer).setUint32(0, n);
    yield chunk;
  }
}

async function measure(label: string, run: () => Promise<unknown>) {
  globalThis.gc?.();
  const before = process.memoryUsage();
  let peakHeap = before.heapUsed;
  let peakRss = before.rss;
  let peakBuffers = before.arrayBuffers;
  const sampler = setInterval(() => {
    const now = process.memoryUsage();
    peakHeap = Math.max(peakHeap, now.heapUsed);
    peakRss = Math.max(peakRss, now.rss);
    peakBuffers = Math.max(peakBuffers, now.arrayBuffers);
  }, 50);
  const started = performance.now();
  await run();
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  return {
    label,
    seconds,
    heapGrowth: peakHeap - before.heapUsed,
    rssGrowth: peakRss - before.rss,
    bufferGrowth: peakBuffers - before.arrayBuffers,
  };
}

const figures: BenchmarkFigure[] = [];
const report = (figure: BenchmarkFigure) => figures.push(printFigure(figure));
const round = (value: number, digits: number) => Number(value.toFixed(digits));
const HASH_ONLY = 'baseline: hash only';

const baseline = await measure('hash only', async () => {
  const hash = createHash('sha256');
  for await (const chunk of source()) hash.update(chunk);
  hash.digest();
});
const dir = mkdtempSync(join(tmpdir(), 'storage-bench-'));
const kubo = await startKubo();
const stores: [string, ContentStore][] = [
  ['embedded', new EmbeddedStore(dir)],
  ['kubo', new KuboStore({ url: kubo.apiUrl })],
];
process.stdout.write(`stream of ${(TOTAL / MiB).toFixed(0)} MiB\n`);
report({ name: HASH_ONLY, value: round(TOTAL / MiB / baseline.seconds, 0), unit: 'MiB/s' });
for (const [name, store] of stores) {
  const result = await measure(name, () => store.add(source()));
  const mib = (bytes: number) => round(bytes / MiB, 1);
  report({ name: `${name}: add`, value: round(TOTAL / MiB / result.seconds, 0), unit: 'MiB/s', baseline: HASH_ONLY });
  const ratio = round(result.seconds / baseline.seconds, 1);
  report({ name: `${name}: ratio add time / hash time`, value: ratio, unit: '×', baseline: HASH_ONLY });
  report({ name: `${name}: peak heap growth while adding`, value: mib(result.heapGrowth), unit: 'MiB' });
  report({ name: `${name}: peak RSS growth while adding`, value: mib(result.rssGrowth), unit: 'MiB' });
  report({ name: `${name}: peak ArrayBuffer growth while adding`, value: mib(result.bufferGrowth), unit: 'MiB' });
}
report({ name: 'baseline: peak RSS growth while hashing', value: round(baseline.rssGrowth / MiB, 1), unit: 'MiB' });
const written = writeBenchmarkResult({
  benchmark: 'storage-streaming',
  title: 'Storage: a large stream added to each content store',
  figures,
  notes: [
    `A stream of ${(TOTAL / MiB).toFixed(0)} MiB (BENCH_BYTES) in 64 KiB chunks, added to the embedded store and to ` +
      'a local Kubo; the baseline hashes the same stream (sha-256) without storing it.',
  ],
});
process.stdout.write(`written to ${written}\n`);
await stores[0]?.[1].close?.();
await kubo.stop();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
