// Devchain benchmarks: start to first block, signed extrinsics per block in interval mode, memory after
// 10,000 blocks. Each figure comes with a baseline measured in the same run, and the ratio between them.
import { ApiPromise, WsProvider } from '@polkadot/api';
import type { KeyringPair } from '@polkadot/keyring/types';
import { Metadata, TypeRegistry } from '@polkadot/types';
import { performance } from 'node:perf_hooks';
import { devKeyring, startDevchain, buildMetadata } from '../src/index.js';

const line = (name: string, value: string) => process.stdout.write(`${name.padEnd(44)} ${value}\n`);
const ms = (value: number) => `${value.toFixed(0)} ms`;
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
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
  line('start: listening', ms(listening));
  line('start: first block', ms(firstBlock));
  line('baseline: decode the metadata once', ms(baseline));
  line('ratio first block / baseline', `${(firstBlock / baseline).toFixed(1)}×`);
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
  line(`throughput: ${total} transfers, block time`, ms(blockTimeMs));
  line('throughput: included', `${included} of ${total} in ${busy.length} blocks`);
  line('throughput: most in one block', `${Math.max(...busy)}`);
  line('throughput: submitted per second', `${(total / submitSeconds).toFixed(0)}`);
  line('baseline: client signs per second', `${(total / signingSeconds).toFixed(0)}`);
  line('ratio accepted / signed per second', `${(signingSeconds / submitSeconds).toFixed(2)}`);
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
  line(`memory: heap after ${blocks} blocks`, mb(after));
  line('baseline: heap after genesis', mb(baseline));
  line('memory: growth per block', `${((after - baseline) / blocks / 1024).toFixed(2)} KiB`);
  line('ratio heap after / after genesis', `${(after / baseline).toFixed(2)}×`);
  line('sealing: empty blocks per second', `${(blocks / seconds).toFixed(0)}`);
}

await startToFirstBlock();
await extrinsicsPerBlock(Number(process.env.BENCH_TRANSFERS ?? 1500), Number(process.env.BENCH_BLOCK_TIME_MS ?? 2000));
await memoryAfterBlocks(Number(process.env.BENCH_BLOCKS ?? 10_000));
process.exit(0);
