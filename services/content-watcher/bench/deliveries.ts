// Benchmark of the content watcher: a backlog of BENCH_ROWS broadcast rows (100,000) in BENCH_FILES batch files
// (50) is put in Kubo and announced on a devchain, then one watcher worker starts at block 1 and is timed until
// the webhook receiver (on this machine) has every announcement. Reported: announcements delivered per second,
// next to a baseline measured in the same run, the receiver's own rate for plain POSTs from this process with
// the same concurrency (WEBHOOK_CONCURRENCY), as a ratio; and the worker's peak memory. Printed, and written to
// docs/measurements/content-watcher-deliveries.json. BENCH_WORKER_NODE_ARGS (e.g. "--max-old-space-size=192" or
// "--heapsnapshot-signal=SIGUSR2") passes Node arguments to the compiled worker.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ChainQueries, connectChain, loadProviderKey, messageCalls } from '@frequency-gateway/chain';
import { spawnDevchain } from '@frequency-gateway/devchain';
import {
  spawnServer,
  startKubo,
  startRedisServer,
  startWebhookReceiver,
  writeBenchmarkResult,
} from '@frequency-gateway/devstack';
import { LOOPBACK_DESTINATIONS } from '@frequency-gateway/platform';
import { AnnouncementType, parseParquetModel, writeBatch } from '@frequency-gateway/dsnp';
import { KuboStore } from '@frequency-gateway/storage';
import { Redis } from 'ioredis';

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const FILES = Number(process.env.BENCH_FILES ?? 50);
const CONCURRENCY = Number(process.env.BENCH_WEBHOOK_CONCURRENCY ?? 20);

const line = (name: string, value: string) => process.stdout.write(`${name.padEnd(58)}${value}\n`);
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const [devchain, redis, kubo, receiver] = await Promise.all([
  spawnDevchain({ sealing: 'interval', blockTimeMs: 500, finalityLag: 1 }),
  startRedisServer({ appendOnly: 'everysec' }),
  startKubo(),
  startWebhookReceiver(),
]);
const chain = await connectChain({ url: devchain.url });
const compiled = existsSync(fileURLToPath(new URL('../dist/main.js', import.meta.url)));
const main = fileURLToPath(new URL(compiled ? '../dist/main.js' : '../src/main.ts', import.meta.url));
let worker: Awaited<ReturnType<typeof spawnServer>> | undefined;
try {
  line('worker runs from', compiled ? 'dist/ (compiled)' : 'src/ through tsx (`make build` for compiled)');

  // The backlog: FILES batch files of broadcasts from 50 users, each announced by one IPFS message.
  const queries = new ChainQueries(chain.api);
  const intent = (await queries.intentByName('dsnp.broadcast'))!;
  const schema = (await queries.schema(intent.latestSchemaId!))!;
  const model = parseParquetModel(schema.model);
  const store = new KuboStore({ url: kubo.apiUrl });
  const perFile = Math.ceil(ROWS / FILES);
  const calls: ReturnType<ReturnType<typeof messageCalls>['addIpfsMessage']>[] = [];
  for (let file = 0; file < FILES; file++) {
    const rows = Array.from({ length: Math.min(perFile, ROWS - file * perFile) }, (_, row) => ({
      announcementType: AnnouncementType.Broadcast,
      fromId: BigInt(1000 + (row % 50)),
      contentHash: `bciqbench${file}x${row}`,
      url: `https://example.com/${file}/${row}`,
    }));
    const bytes = await writeBatch(model, rows);
    const { cid } = await store.add(bytes);
    calls.push(messageCalls(chain.api).addIpfsMessage(intent.latestSchemaId!, cid, bytes.length));
  }
  const alice = await loadProviderKey('//Alice');
  await new Promise<void>((resolve, reject) => {
    chain.api.tx.utility
      .batchAll(calls)
      .signAndSend(alice.address, { signer: alice.signer }, (result) => {
        if (result.dispatchError) reject(new Error(result.dispatchError.toString()));
        else if (result.status.isFinalized) resolve();
      })
      .catch(reject);
  });
  line('backlog', `${ROWS} broadcast rows in ${FILES} batch files, announced on chain`);

  // Baseline: what the receiver takes from plain POSTs of the same size, CONCURRENCY at a time.
  const sample = JSON.stringify({
    blockNumber: 1,
    schemaId: 17,
    intentId: 17,
    announcement: { announcementType: 2, fromId: '1000', contentHash: 'bciqbench0x0', url: 'https://example.com/0/0' },
  });
  const baselineCount = Math.min(ROWS, 20_000);
  let sent = 0;
  const baselineStart = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (sent < baselineCount) {
        sent++;
        const response = await fetch(`${receiver.url}/baseline`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: sample,
        });
        await response.arrayBuffer();
      }
    }),
  );
  const baselineRate = baselineCount / ((performance.now() - baselineStart) / 1000);
  receiver.received.length = 0;

  const env = {
    REDIS_URL: redis.url,
    CACHE_KEY_PREFIX: 'bench',
    FREQUENCY_API_WS_URL: devchain.url,
    IPFS_ENDPOINT: kubo.apiUrl,
    STARTING_BLOCK: '1',
    WEBHOOK_CONCURRENCY: String(CONCURRENCY),
    WEBHOOK_SECRET: 'bench-webhook-secret-0123456789',
    // The receiver is on this machine's loopback interface, which the outbound policy refuses unless opened.
    OUTBOUND_ALLOWED_DESTINATIONS: LOOPBACK_DESTINATIONS,
  };
  const client = new Redis(redis.url);
  await client.sadd('{bench}:webhooks:broadcast', `${receiver.url}/announcements`);
  client.disconnect();

  const started = performance.now();
  worker = await spawnServer([main, 'worker'], env, {
    portVariable: 'WORKER_API_PORT',
    ...(compiled ? { node: (process.env.BENCH_WORKER_NODE_ARGS ?? '').split(/\s+/).filter(Boolean) } : {}),
  });
  let peak = 0;
  for (;;) {
    peak = Math.max(peak, worker.memory().rss);
    if (receiver.received.length >= ROWS) break;
    if (performance.now() - started > 30 * 60_000) throw new Error(`only ${receiver.received.length} delivered`);
    await wait(200);
  }
  const seconds = (performance.now() - started) / 1000;
  await wait(3000);
  const rate = ROWS / seconds;
  const distinct = new Set(receiver.received.map((delivery) => delivery.headers['webhook-id'])).size;

  line('delivered (distinct webhook ids)', `${receiver.received.length} (${distinct})`);
  line('worker start to last delivery', `${seconds.toFixed(1)} s`);
  line('announcements delivered per second', rate.toFixed(0));
  line(`baseline: plain POSTs per second (${CONCURRENCY} at a time)`, baselineRate.toFixed(0));
  line('watcher rate / baseline', (rate / baselineRate).toFixed(2));
  line('worker peak RSS', `${(Math.max(peak, worker.memory().peak) / 2 ** 20).toFixed(0)} MiB`);
  const PLAIN_POSTS = `baseline: plain POSTs per second (${CONCURRENCY} at a time)`;
  const written = writeBenchmarkResult({
    benchmark: 'content-watcher-deliveries',
    title: 'Content watcher: a backlog of announcements delivered to a webhook',
    figures: [
      { name: 'delivered (distinct webhook ids)', value: distinct, unit: `of ${ROWS} announcements` },
      { name: 'worker start to last delivery', value: Number(seconds.toFixed(1)), unit: 's' },
      { name: 'announcements delivered per second', value: Math.round(rate), unit: '/s', baseline: PLAIN_POSTS },
      { name: PLAIN_POSTS, value: Math.round(baselineRate), unit: '/s' },
      {
        name: 'watcher rate / baseline',
        value: Number((rate / baselineRate).toFixed(2)),
        unit: '×',
        baseline: PLAIN_POSTS,
      },
      { name: 'worker peak RSS', value: Math.round(Math.max(peak, worker.memory().peak) / 2 ** 20), unit: 'MiB' },
    ],
    notes: [
      `${ROWS} broadcast rows (BENCH_ROWS) in ${FILES} batch files (BENCH_FILES) in Kubo, announced on a devchain with ` +
        `500 ms blocks; one worker from ${compiled ? 'dist/ (compiled)' : 'src/ through tsx'} starts at block 1, ` +
        `WEBHOOK_CONCURRENCY ${CONCURRENCY}; the receiver runs on the same machine.`,
    ],
  });
  line('result', written);
} finally {
  await worker?.stop();
  await chain.close();
  await Promise.all([devchain.stop(), redis.stop(), kubo.stop(), receiver.stop()]);
}
process.exit(0);
