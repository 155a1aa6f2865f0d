// Streaming benchmark: add a large stream to each store while sampling memory; every figure is reported
// against a baseline measured in the same run (hashing the same stream without storing it).
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startKubo } from '@frequency-gateway/devstack';
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

const line = (name: string, value: string) => process.stdout.write(`${name.padEnd(50)}${value}\n`);

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
line(
  `stream of ${(TOTAL / MiB).toFixed(0)} MiB, baseline: hash only`,
  `${(TOTAL / MiB / baseline.seconds).toFixed(0)} MiB/s`,
);
for (const [name, store] of stores) {
  const result = await measure(name, () => store.add(source()));
  line(`${name}: add`, `${(TOTAL / MiB / result.seconds).toFixed(0)} MiB/s`);
  line(`${name}: ratio add time / hash time`, `${(result.seconds / baseline.seconds).toFixed(1)}×`);
  line(`${name}: peak heap growth while adding`, `${(result.heapGrowth / MiB).toFixed(1)} MiB`);
  line(`${name}: peak RSS growth while adding`, `${(result.rssGrowth / MiB).toFixed(1)} MiB`);
  line(`${name}: peak ArrayBuffer growth while adding`, `${(result.bufferGrowth / MiB).toFixed(1)} MiB`);
}
line('baseline: peak RSS growth while hashing', `${(baseline.rssGrowth / MiB).toFixed(1)} MiB`);
await stores[0]?.[1].close?.();
await kubo.stop();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
