// Devchain benchmarks: start to first block, signed extrinsics per block in interval mode, memory over
// 12,000 blocks, pruned and archive. Each figure comes with a baseline measured in the same run, and the ratio
// between them. Printed, and written to docs/measurements/devchain.json.
import { ApiPromise, WsProvider } from '@polkadot/api';
import type { KeyringPair } from '@polkadot/keyring/types';
import { Metadata, TypeRegistry } from '@polkadot/types';
import { performance } from 'node:perf_hooks';
import { type BenchmarkFigure, printFigure, writeBenchmarkResult } from '@frequency-gateway/devstack';
import { devKeyring, startDevchain, buildMetadata } from '../src/index.js';

const figures: BenchmarkFigure[] = [];
const report = (figure: BenchmarkFigure) => figures.push(printFigure(figure, 45));
const notes: string[] = [];
const round = (value: number, digits = 0) => Number(value.toFixed(digits));
const mib = (bytes: number) => round(bytes / 1024 / 1024, 1);
const gc = () => (globalThis as { gc?: () => void }).gc?.();

async function startToFirstBlock() {
  // Baseline: what decoding the runtime metadata costs polkadot-js alone, which any node client pays too.
  const metadata = await buildMetadata();
  const decodeStart = performance.now();
  const registry = new TypeRegistry();
  registry.setMetadata(new Metadata(registry, metadata.v15));
  const baseline = performance.now() - decodeStart;

  const started = performance.now();
  const devchain = await startDevchain({ sealing: 'interval', blockTimeMs: 1 });
  const listening = performance.now() - started;
  await new Promise<void>((resolve) => devchain.chain.once('block', () => resolve()));
  const firstBlock = performance.now() - started;
  await devchain.close();
  const DECODE = 'baseline: decode the metadata once';
  report({ name: 'start: listening', value: round(listening), unit: 'ms' });
  report({ name: 'start: first block', value: round(firstBlock), unit: 'ms', baseline: DECODE });
  report({ name: DECODE, value: round(baseline), unit: 'ms' });
  report({ name: 'ratio first block / baseline', value: round(firstBlock / baseline, 1), unit: '×', baseline: DECODE });
}

async function extrinsicsPerBlock(total: number, blockTimeMs: number) {
  const devchain = await startDevchain({ sealing: 'interval', blockTimeMs });
  const api = await ApiPromise.create({ provider: new WsProvider(devchain.url), noInitWarn: true });
  const keyring = await devKeyring(42);
  const senders = keyring.getPairs();
  const receiver = senders[0] as KeyringPair;
  const signingStart = performance.now();
  const signed: string[] = [];
  const perSender = Math.ceil(total / senders.length);
  for (const [index, sender] of senders.entries()) {
    for (let nonce = 0; nonce < perSender && signed.length < total; nonce++) {
      const tx = api.tx.balances.transferKeepAlive(receiver.address, 1_000_000n + BigInt(index));
      signed.push((await tx.signAsync(sender, { nonce, era: 0 })).toHex());
    }
  }
  const signingSeconds = (performance.now() - signingStart) / 1000;
  const counts: number[] = [];
  devchain.chain.on('block', (block) => counts.push(block.extrinsics.length - 1));
  const submitStart = performance.now();
  await Promise.all(signed.map((hex) => api.rpc.author.submitExtrinsic(hex)));
  const submitSeconds = (performance.now() - submitStart) / 1000;
  while (devchain.chain.pool.size > 0) await new Promise((resolve) => setTimeout(resolve, blockTimeMs));
  await new Promise((resolve) => setTimeout(resolve, blockTimeMs * 2));
  const busy = counts.filter((count) => count > 0);
  const included = busy.reduce((sum, count) => sum + count, 0);
  await api.disconnect();
  await devchain.close();
  const SIGNING = 'baseline: client signs per second';
  notes.push(`Throughput: ${total} signed transfers (BENCH_TRANSFERS) submitted at once, ${blockTimeMs} ms blocks.`);
  report({ name: 'throughput: included', value: included, unit: `of ${total} transfers` });
  report({ name: 'throughput: blocks they took', value: busy.length, unit: 'blocks' });
  report({ name: 'throughput: most in one block', value: Math.max(...busy), unit: 'transfers' });
  report({
    name: 'throughput: submitted per second',
    value: round(total / submitSeconds),
    unit: '/s',
    baseline: SIGNING,
  });
  report({ name: SIGNING, value: round(total / signingSeconds), unit: '/s' });
  const ratio = round(signingSeconds / submitSeconds, 2);
  report({ name: 'ratio accepted / signed per second', value: ratio, unit: '×', baseline: SIGNING });
}

/** Seals `blocks` empty blocks in a devchain keeping `keepBlocks`: its heap after genesis, halfway and at the end. */
async function heapOverBlocks(blocks: number, keepBlocks: number | 'archive') {
  const devchain = await startDevchain({ sealing: 'instant', keepBlocks });
  const heap = () => (gc(), process.memoryUsage().heapUsed);
  const genesis = heap();
  const half = Math.floor(blocks / 2);
  const started = performance.now();
  for (let index = 0; index < half; index++) devchain.chain.seal();
  const middle = heap();
  for (let index = half; index < blocks; index++) devchain.chain.seal();
  const seconds = (performance.now() - started) / 1000;
  const after = heap();
  await devchain.close();
  return { genesis, after, secondHalfPerBlock: (after - middle) / (blocks - half), seconds };
}

async function memoryOverBlocks(blocks: number, keepBlocks: number) {
  // The pruned chain first: its heap after genesis is then the process's own, with no closed chain in it.
  const pruned = await heapOverBlocks(blocks, keepBlocks);
  const archive = await heapOverBlocks(blocks, 'archive');
  const GENESIS = 'baseline: heap after genesis';
  const ARCHIVE = 'baseline: archive, growth per block';
  notes.push(
    `Memory: ${blocks} empty blocks (BENCH_BLOCKS) sealed in one process, once keeping every block (archive) and ` +
      `once keeping ${keepBlocks} (BENCH_KEEP_BLOCKS); growth per block over the second half, when the kept window ` +
      'and the BlockHash window (4,096) are full.',
  );
  report({ name: `memory: heap after ${blocks} blocks`, value: mib(pruned.after), unit: 'MiB', baseline: GENESIS });
  report({ name: GENESIS, value: mib(pruned.genesis), unit: 'MiB' });
  report({
    name: 'ratio heap after / after genesis',
    value: round(pruned.after / pruned.genesis, 2),
    unit: '×',
    baseline: GENESIS,
  });
  const perBlock = round(pruned.secondHalfPerBlock / 1024, 3);
  report({ name: `memory: growth per block, keeping ${keepBlocks}`, value: perBlock, unit: 'KiB', baseline: ARCHIVE });
  report({ name: ARCHIVE, value: round(archive.secondHalfPerBlock / 1024, 3), unit: 'KiB' });
  report({ name: `memory: archive heap after ${blocks} blocks`, value: mib(archive.after), unit: 'MiB' });
  report({ name: 'sealing: empty blocks per second', value: round(blocks / pruned.seconds), unit: '/s' });
}

await startToFirstBlock();
await extrinsicsPerBlock(Number(process.env.BENCH_TRANSFERS ?? 1500), Number(process.env.BENCH_BLOCK_TIME_MS ?? 2000));
await memoryOverBlocks(Number(process.env.BENCH_BLOCKS ?? 12_000), Number(process.env.BENCH_KEEP_BLOCKS ?? 1_000));
const written = writeBenchmarkResult({
  benchmark: 'devchain',
  title: 'Devchain: start, transfers per block, memory over blocks',
  figures,
  notes,
});
process.stdout.write(`written to ${written}\n`);
process.exit(0);
