// End-to-end benchmark of the publishing pipeline on a devchain with 6-second blocks: BENCH_BROADCASTS
// broadcasts (100,000) posted as fast as the api takes them, then timed until the last is finalized. Reported:
// announcements per minute from the first POST to the last finalization, the time from the last POST to the
// last finalization in block times (goal ≤ 3), and the transactions used, next to the chain-side limit (the
// maximum calls per capacity batch × the messages a block can hold). Printed, and written to
// docs/measurements/content-publishing-pipeline.json.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ChainQueries, connectChain } from '@frequency-gateway/chain';
import { spawnDevchain } from '@frequency-gateway/devchain';
import {
  cpuSeconds,
  capacityMeter,
  dsnpUsers,
  redisTraffic,
  topCommands,
  trafficPer,
  startKubo,
  startRedisServer,
  writeBenchmarkResult,
  type BenchmarkFigure,
} from '@frequency-gateway/devstack';
import { startComponentProcess } from '@frequency-gateway/devstack/gateway';
import { nodeArgsFrom } from '../test/support/apiProcess.js';
import { metric } from '../test/support/pipeline.js';

const BROADCASTS = Number(process.env.BENCH_BROADCASTS ?? 100_000);
const BLOCK_MS = Number(process.env.BENCH_BLOCK_MS ?? 6_000);
const CONNECTIONS = 64;

/**
 * BENCH_WORKER_ENV="REQUEST_CONCURRENCY=32 …": worker settings to compare. BENCH_API_NODE_ARGS and
 * BENCH_WORKER_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") pass Node arguments to the api and worker.
 */
const workerEnv = () =>
  Object.fromEntries(
    (process.env.BENCH_WORKER_ENV ?? '')
      .split(/\s+/)
      .filter(Boolean)
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );

const line = (name: string, value: string) => process.stdout.write(`${name.padEnd(58)}${value}\n`);

const folder = mkdtempSync(join(tmpdir(), 'bench-pipeline-'));
// The broadcasts come from 50 users (MSA 2–51) who delegated their DSNP content to the provider.
const SENDERS = 50;
const genesisFile = join(folder, 'genesis.json');
writeFileSync(genesisFile, JSON.stringify(dsnpUsers(SENDERS)));
const [devchain, redis, kubo] = await Promise.all([
  spawnDevchain({ sealing: 'interval', blockTimeMs: BLOCK_MS, finalityLag: 1, genesisFile }),
  startRedisServer({ appendOnly: 'everysec' }),
  startKubo(),
]);
const compiled = existsSync(fileURLToPath(new URL('../dist/main.js', import.meta.url)));
const env = {
  REDIS_URL: redis.url,
  FREQUENCY_API_WS_URL: devchain.url,
  PROVIDER_ID: '1',
  IPFS_ENDPOINT: kubo.apiUrl,
  IPFS_GATEWAY_URL: `${kubo.gatewayUrl}/ipfs/[CID]`,
};
const api = await startComponentProcess('content-publishing', 'api', env, {
  compiled,
  nodeArgs: nodeArgsFrom('BENCH_API_NODE_ARGS'),
});
const worker = await startComponentProcess(
  'content-publishing',
  'worker',
  {
    ...env,
    PROVIDER_ACCOUNT_SEED_PHRASE: '//Alice',
    BATCH_MAX_COUNT: '1000',
    BATCH_INTERVAL_SECONDS: '2',
    ...workerEnv(),
  },
  { compiled, nodeArgs: nodeArgsFrom('BENCH_WORKER_NODE_ARGS') },
);
const chain = await connectChain({ url: devchain.url });
try {
  for (let ready = false; !ready; await new Promise((resolve) => setTimeout(resolve, 500)))
    ready = (await fetch(`${worker.url}/readyz`)).ok;
  line('api and worker run from', compiled ? 'dist/ (compiled)' : 'src/ through tsx (`make build` for compiled)');

  // CPU seconds each process spends from the first POST to the last finalization: where the 2 cores go.
  const processes: [string, () => number][] = [
    ['api', () => cpuSeconds(api.pid)],
    ['worker', () => cpuSeconds(worker.pid)],
    ['Kubo', () => cpuSeconds(kubo.pid() as number)],
    ['Redis', () => cpuSeconds(redis.pid() as number)],
    ['devchain', () => cpuSeconds(devchain.pid)],
    ['this client', () => cpuSeconds(process.pid)],
  ];
  const cpuBefore = processes.map(([, read]) => read());
  const trafficBefore = await redisTraffic(redis.url);
  const capacitySpent = await capacityMeter(chain.api, 1);
  const started = performance.now();
  let next = 0;
  let refused = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      for (let index = next++; index < BROADCASTS; index = next++) {
        for (;;) {
          const response = await fetch(`${api.url}/v1/content/${2 + (index % SENDERS)}/broadcast`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ content: { content: `bench ${index}`, published: '2026-11-21T10:00:00Z' } }),
          });
          await response.arrayBuffer();
          if (response.status === 202) break;
          refused++;
        }
      }
    }),
  );
  const lastPost = performance.now();
  const batchedAtLastPost = await metric(worker.url, 'content_announcements_batched_total');
  for (;;) {
    const finished = await metric(worker.url, 'content_requests_finished_total');
    if (finished >= BROADCASTS) break;
    if (performance.now() - lastPost > 20 * BLOCK_MS) throw new Error(`only ${finished} finished after 20 blocks`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const done = performance.now();
  const traffic = trafficPer(trafficBefore, await redisTraffic(redis.url), BROADCASTS);
  const capacity = await capacitySpent();
  const cpuUsed = processes.map(([name, read], index) => [name, read() - (cpuBefore[index] as number)] as const);
  const cpu = cpuUsed.map(([name, seconds]) => `${name} ${seconds.toFixed(1)}`);
  const finalized = await metric(worker.url, 'content_requests_finished_total', 'outcome="finalized"');
  const transactions = await metric(worker.url, 'content_publish_transactions_total', 'outcome="submitted"');
  const calls = await metric(worker.url, 'content_publish_calls_per_transaction_sum');
  const maxBatch = (
    chain.api.consts.frequencyTxPayment.maximumCapacityBatchLength as unknown as { toNumber(): number }
  ).toNumber();
  const perBlock = 2 ** 16 - 1; // the messages pallet's u16 message index
  await new ChainQueries(chain.api).finalizedBlock();

  line('broadcasts posted', `${BROADCASTS} in ${((lastPost - started) / 1000).toFixed(1)} s (${refused} refused)`);
  line('announcements batched by the worker at the last POST', `${batchedAtLastPost}`);
  line('finalized / failed', `${finalized} / ${BROADCASTS - finalized}`);
  line('announcements per minute, first POST to last finalized', ((BROADCASTS / (done - started)) * 60_000).toFixed(0));
  line(
    'last POST to last finalized (goal ≤ 3 block times)',
    `${((done - lastPost) / 1000).toFixed(1)} s = ${((done - lastPost) / BLOCK_MS).toFixed(2)} block times`,
  );
  line('capacity transactions used (messages in them)', `${transactions} (${calls})`);
  line(`CPU seconds in ${((done - started) / 1000).toFixed(1)} s`, cpu.join(', '));
  line(
    'Capacity spent per transaction',
    capacity === undefined ? 'not measured (a new epoch)' : `${capacity / BigInt(Math.max(1, transactions))}`,
  );
  line(
    'Redis per broadcast, all components: commands, bytes in/out',
    `${traffic.commands.toFixed(1)}, ${traffic.bytesIn.toFixed(0)}/${traffic.bytesOut.toFixed(0)}`,
  );
  line('  the most frequent', topCommands(traffic));
  line(
    'chain-side limit: calls per batch × messages per block',
    `${maxBatch} × ${perBlock} (each message a batch file of up to BATCH_MAX_COUNT = 1000 rows)`,
  );
  const rounded = (value: number, digits = 0) => Number(value.toFixed(digits));
  const figures: BenchmarkFigure[] = [
    { name: 'broadcasts posted in', value: rounded((lastPost - started) / 1000, 1), unit: 's' },
    { name: 'refused while posting (posted again)', value: refused, unit: 'answers' },
    { name: 'finalized', value: finalized, unit: `of ${BROADCASTS} broadcasts` },
    {
      name: 'announcements per minute, first POST to last finalized',
      value: rounded((BROADCASTS / (done - started)) * 60_000),
      unit: '/min',
    },
    {
      name: 'last POST to last finalized',
      value: rounded((done - lastPost) / BLOCK_MS, 2),
      unit: 'block times',
      goal: '≤ 3',
    },
    { name: 'capacity transactions used', value: transactions, unit: 'transactions' },
    { name: 'messages in them', value: calls, unit: 'messages' },
    { name: 'announcements per message', value: rounded(BROADCASTS / Math.max(1, calls), 1), unit: 'announcements' },
    ...cpuUsed.map(([name, seconds]) => ({ name: `CPU seconds: ${name}`, value: rounded(seconds, 1), unit: 's' })),
    ...cpuUsed.map(([name, seconds]) => ({
      name: `CPU per broadcast: ${name}`,
      value: rounded((seconds / BROADCASTS) * 1e6),
      unit: 'µs',
    })),
    { name: 'peak RSS: api', value: rounded(api.memory().peak / 2 ** 20), unit: 'MiB' },
    { name: 'peak RSS: worker', value: rounded(worker.memory().peak / 2 ** 20), unit: 'MiB' },
    // Scripts' own commands count: the Redis CPU's work, from the intake to the finalized record.
    // Unmeasured when the provider's Capacity was replenished (a new epoch) during the run.
    ...(capacity === undefined || transactions === 0
      ? []
      : [
          {
            name: 'Capacity per transaction',
            value: rounded(Number(capacity) / transactions),
            unit: 'planck of Capacity',
          },
        ]),
    { name: 'Redis commands per broadcast', value: rounded(traffic.commands, 2), unit: 'commands' },
    { name: 'Redis bytes in per broadcast', value: rounded(traffic.bytesIn), unit: 'bytes' },
    { name: 'Redis bytes out per broadcast', value: rounded(traffic.bytesOut), unit: 'bytes' },
  ];
  const written = writeBenchmarkResult({
    benchmark: 'content-publishing-pipeline',
    title: 'Content publishing pipeline: broadcasts to finalized announcements',
    figures,
    notes: [
      `${BROADCASTS} broadcasts (BENCH_BROADCASTS) from ${CONNECTIONS} connections, on a devchain with ${BLOCK_MS} ms ` +
        `blocks (BENCH_BLOCK_MS); api and worker from ${compiled ? 'dist/ (compiled)' : 'src/ through tsx'}. CPU ` +
        `seconds are from the first POST to the last finalization, ${((done - started) / 1000).toFixed(1)} s.`,
      `Chain-side limit: ${maxBatch} calls per capacity batch × ${perBlock} messages per block.`,
    ],
  });
  line('result', written);
} finally {
  await worker.stop();
  await api.stop();
  await chain.close();
  await Promise.all([devchain.stop(), redis.stop(), kubo.stop()]);
  rmSync(folder, { recursive: true, force: true });
}
process.exit(0);
