// Devchain benchmarks: start to first block, signed extrinsics per block in interval mode, memory after
// 10,000 blocks. Each figure comes with a baseline measured in the same run, and the ratio between them. Printed,
// and written to docs/measurements/devchain.json.
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

async function memoryAfterBlocks(blocks: number) {
  const devchain = await startDevchain({ sealing: 'instant' });
  gc();
  const baseline = process.memoryUsage().heapUsed;
  const started = performance.now();
  for (let index = 0; index < blocks; index++) devchain.chain.seal();
  const seconds = (performance.now() - started) / 1000;
  gc();
  const after = process.memoryUsage().heapUsed;
  await devchain.close();
  const GENESIS = 'baseline: heap after genesis';
  report({ name: `memory: heap after ${blocks} blocks`, value: mib(after), unit: 'MiB', baseline: GENESIS });
  report({ name: GENESIS, value: mib(baseline), unit: 'MiB' });
  report({ name: 'memory: growth per block', value: round((after - baseline) / blocks / 1024, 2), unit: 'KiB' });
  report({ name: 'ratio heap after / after genesis', value: round(after / baseline, 2), unit: '×', baseline: GENESIS });
  report({ name: 'sealing: empty blocks per second', value: round(blocks / seconds), unit: '/s' });
}

await startToFirstBlock();
await extrinsicsPerBlock(Number(process.env.BENCH_TRANSFERS ?? 1500), Number(process.env.BENCH_BLOCK_TIME_MS ?? 2000));
await memoryAfterBlocks(Number(process.env.BENCH_BLOCKS ?? 10_000));
const written = writeBenchmarkResult({
  benchmark: 'devchain',
  title: 'Devchain: start, transfers per block, memory over blocks',
  figures,
  notes,
});
process.stdout.write(`written to ${written}\n`);
process.exit(0);
