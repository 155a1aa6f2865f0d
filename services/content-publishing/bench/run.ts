// Benchmarks of the content publishing api, each against a baseline measured in the same run:
// - broadcast intake: requests per second and p99 latency at saturation, against a bare Express handler that
//   parses the same body and does one Redis LPUSH (goal ≥ 0.5);
// - the cost of acknowledged = durable: intake throughput with REDIS_DURABILITY=replicated (each 202 waits for
//   a replica's WAIT) against the same api without it, on one primary with one replica (BENCH_DURABILITY_ROUNDS);
// - upload throughput: a large file through POST /v2/asset/upload against adding the same bytes to the same
//   kind of store directly (goal ≥ 0.8), with the api process's peak RSS growth (goal < 64 MiB).
// The api and the baseline run as processes of their own, as they are deployed. Each is measured in short
// rounds alternating with its baseline (BENCH_INTAKE_ROUNDS, BENCH_UPLOAD_ROUNDS) and the median ratio reported.
// Printed, and written to docs/measurements/content-publishing-api.json.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { parseExtraGenesis, startDevchain } from '@frequency-gateway/devchain';
import {
  cpuSeconds,
  dsnpUsers,
  spawnServer,
  startRedisServer,
  redisTraffic,
  trafficPer,
  waitUntil,
  writeBenchmarkResult,
  type BenchmarkFigure,
  type RedisTraffic,
  type ServerProcess,
} from '@frequency-gateway/devstack';
import { EmbeddedStore } from '@frequency-gateway/storage';
import { startComponentProcess, type ComponentProcess } from '@frequency-gateway/devstack/gateway';
import { generatedBytes, nodeArgsFrom, streamUpload } from '../test/support/apiProcess.js';

const UPLOAD_BYTES = Number(process.env.BENCH_UPLOAD_BYTES ?? 256 * 1024 ** 2);
const UPLOAD_ROUNDS = Number(process.env.BENCH_UPLOAD_ROUNDS ?? 7);
const INTAKE_SECONDS = Number(process.env.BENCH_INTAKE_SECONDS ?? 4);
const INTAKE_ROUNDS = Number(process.env.BENCH_INTAKE_ROUNDS ?? 5);
const DURABILITY_ROUNDS = Number(process.env.BENCH_DURABILITY_ROUNDS ?? 5);
const MiB = 1024 * 1024;

const line = (name: string, value: string) => process.stdout.write(`${name.padEnd(58)}${value}\n`);

const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)] as number;

/** The median of the rounds' ratios, followed by every round's, lowest first. */
function medianOf(ratios: number[]): string {
  const sorted = [...ratios].sort((x, y) => x - y);
  return `${median(ratios).toFixed(2)} (rounds ${sorted.map((ratio) => ratio.toFixed(2)).join(', ')})`;
}

const rounded = (value: number, digits = 0) => Number(value.toFixed(digits));
const figures: BenchmarkFigure[] = [];

/** A rate and its same-run baseline, as figures, with the median of the rounds' ratios between them. */
function rateAgainstBaseline(
  baseline: [name: string, rate: number],
  measured: [name: string, rate: number],
  ratios: number[],
  unit: string,
  goal?: string,
): BenchmarkFigure[] {
  return [
    { name: baseline[0], value: rounded(baseline[1]), unit },
    { name: measured[0], value: rounded(measured[1]), unit, baseline: baseline[0] },
    {
      name: `${measured[0]} / baseline, median of ${ratios.length} rounds`,
      value: rounded(median(ratios), 2),
      unit: '×',
      baseline: baseline[0],
      ...(goal ? { goal } : {}),
    },
  ];
}

interface Saturation {
  rps: number;
  p99: number;
  errors: number;
  /** CPU time the server process spent per answered request, in microseconds. */
  cpuPerRequest: number;
  /** What Redis served per answered request. */
  redis: RedisTraffic;
}

/**
 * Saturates one route of a server with distinct broadcast bodies (each a new request) and reports throughput,
 * p99 and the server's CPU time per request (steadier than throughput on a shared host).
 */
async function saturate(server: ServerProcess, redisUrl: string, seconds = INTAKE_SECONDS): Promise<Saturation> {
  let n = 0;
  const trafficBefore = await redisTraffic(redisUrl);
  const cpuBefore = cpuSeconds(server.pid);
  const result = await autocannon({
    url: `${server.url}/v1/content/2/broadcast`,
    method: 'POST',
    connections: 32,
    duration: seconds,
    headers: { 'content-type': 'application/json' },
    requests: [
      {
        setupRequest: (request) => ({
          ...request,
          body: JSON.stringify({
            content: {
              content: `Benchmark broadcast ${n++}`,
              published: '2024-05-01T12:00:00Z',
              tag: [{ type: 'hashtag', name: 'bench' }],
              location: { name: 'Bench', latitude: 1, longitude: 2 },
            },
          }),
        }),
      },
    ],
  });
  const cpu = cpuSeconds(server.pid) - cpuBefore;
  const redis = trafficPer(trafficBefore, await redisTraffic(redisUrl), result.requests.total);
  return {
    redis,
    rps: result.requests.average,
    p99: result.latency.p99,
    errors: result.non2xx + result.errors,
    cpuPerRequest: (cpu / Math.max(1, result.requests.total)) * 1e6,
  };
}

const redis = await startRedisServer();
// MSA 2, the broadcasts' user, has delegated its DSNP content to the provider.
const devchain = await startDevchain({ genesis: await parseExtraGenesis(dsnpUsers(1)) });
const apiDir = mkdtempSync(join(tmpdir(), 'bench-api-'));
const directDir = mkdtempSync(join(tmpdir(), 'bench-direct-'));
// The api as the image runs it (compiled JavaScript) when it has been built, else from its sources.
const compiled = existsSync(fileURLToPath(new URL('../dist/main.js', import.meta.url)));
const api = await startComponentProcess(
  'content-publishing',
  'api',
  {
    REDIS_URL: redis.url,
    FREQUENCY_API_WS_URL: devchain.url,
    PROVIDER_ID: '1',
    IPFS_EMBEDDED_DIR: apiDir,
    FILE_UPLOAD_MAX_SIZE_IN_BYTES: String(UPLOAD_BYTES + 1),
  },
  { compiled, nodeArgs: nodeArgsFrom('BENCH_API_NODE_ARGS') },
);
line('api run from', compiled ? 'dist/ (compiled)' : 'src/ through tsx (run `make build` to measure the compiled api)');
const baselineServer = await spawnServer([fileURLToPath(new URL('baseline.ts', import.meta.url))], {
  REDIS_URL: redis.url,
});

// A primary with one replica, in sync, and two apis on it: one answers once the primary has a request, the other
// once the replica has it too (REDIS_DURABILITY=replicated).
const replicatedPrimary = await startRedisServer();
const replica = await startRedisServer({ args: ['--replicaof', '127.0.0.1', String(replicatedPrimary.port)] });
const primaryClient = new Redis(replicatedPrimary.url);
await waitUntil(
  async () => /^slave0:.*state=online/m.test(await primaryClient.info('replication')),
  30_000,
  'the replica in sync',
);
primaryClient.disconnect();
const durabilityDirs = [mkdtempSync(join(tmpdir(), 'bench-ack-')), mkdtempSync(join(tmpdir(), 'bench-durable-'))];
const [acknowledgedApi, replicatedApi] = (await Promise.all(
  durabilityDirs.map((dir, index) =>
    startComponentProcess(
      'content-publishing',
      'api',
      {
        REDIS_URL: replicatedPrimary.url,
        FREQUENCY_API_WS_URL: devchain.url,
        PROVIDER_ID: '1',
        IPFS_EMBEDDED_DIR: dir,
        ...(index === 1 ? { REDIS_DURABILITY: 'replicated' } : {}),
      },
      { compiled },
    ),
  ),
)) as [ComponentProcess, ComponentProcess];

try {
  await saturate(baselineServer, redis.url); // warm-up of both, so neither pays for JIT in its measured run
  await saturate(api, redis.url);
  // Short rounds of each in turn, so a change in the machine's speed during the run (it shares its host)
  // weighs on both sides alike; each round gives a ratio and the median is reported.
  const rounds: { bare: Saturation; api: Saturation }[] = [];
  for (let round = 0; round < INTAKE_ROUNDS; round++) {
    const first = round % 2 === 0 ? baselineServer : api;
    const second = first === api ? baselineServer : api;
    const [a, b] = [await saturate(first, redis.url), await saturate(second, redis.url)];
    rounds.push(first === api ? { api: a, bare: b } : { bare: a, api: b });
  }
  const sum = (pick: (round: (typeof rounds)[number]) => Saturation) => ({
    rps: rounds.reduce((total, round) => total + pick(round).rps, 0) / rounds.length,
    cpuPerRequest: rounds.reduce((total, round) => total + pick(round).cpuPerRequest, 0) / rounds.length,
    redis: {
      commands: rounds.reduce((total, round) => total + pick(round).redis.commands, 0) / rounds.length,
      bytesIn: rounds.reduce((total, round) => total + pick(round).redis.bytesIn, 0) / rounds.length,
      bytesOut: rounds.reduce((total, round) => total + pick(round).redis.bytesOut, 0) / rounds.length,
    },
    p99: Math.max(...rounds.map((round) => pick(round).p99)),
    errors: rounds.reduce((total, round) => total + pick(round).errors, 0),
  });
  const bare = sum((round) => round.bare);
  const intake = sum((round) => round.api);
  line('broadcast intake, baseline: bare Express + LPUSH', `${bare.rps.toFixed(0)} req/s, p99 ${bare.p99} ms`);
  line('broadcast intake, POST /v1/content/{msaId}/broadcast', `${intake.rps.toFixed(0)} req/s, p99 ${intake.p99} ms`);
  line(
    `ratio api / baseline, median of ${INTAKE_ROUNDS} rounds (goal ≥ 0.5)`,
    medianOf(rounds.map((round) => round.api.rps / round.bare.rps)),
  );
  line(
    'CPU per request, api and baseline (µs)',
    `${intake.cpuPerRequest.toFixed(0)}, ${bare.cpuPerRequest.toFixed(0)}; baseline / api, median ${medianOf(
      rounds.map((round) => round.bare.cpuPerRequest / round.api.cpuPerRequest),
    )}`,
  );
  line('non-2xx answers or errors (api, baseline)', `${intake.errors}, ${bare.errors}`);
  line(
    'Redis per request, api and baseline: commands, bytes in/out',
    `${intake.redis.commands.toFixed(1)}, ${intake.redis.bytesIn.toFixed(0)}/${intake.redis.bytesOut.toFixed(0)}; ` +
      `${bare.redis.commands.toFixed(1)}, ${bare.redis.bytesIn.toFixed(0)}/${bare.redis.bytesOut.toFixed(0)}`,
  );
  const BARE = 'baseline: bare Express + LPUSH';
  figures.push(
    ...rateAgainstBaseline(
      [BARE, bare.rps],
      ['broadcast intake', intake.rps],
      rounds.map((round) => round.api.rps / round.bare.rps),
      'req/s',
      '≥ 0.5',
    ),
    { name: 'baseline p99 (highest round)', value: bare.p99, unit: 'ms' },
    { name: 'broadcast intake p99 (highest round)', value: intake.p99, unit: 'ms' },
    { name: 'baseline CPU per request', value: rounded(bare.cpuPerRequest), unit: 'µs' },
    { name: 'broadcast intake CPU per request', value: rounded(intake.cpuPerRequest), unit: 'µs', baseline: BARE },
    { name: 'non-2xx answers or errors, intake', value: intake.errors, unit: 'answers' },
    // Scripts' own commands count: what the Redis CPU does per request. The worker's relay adds its own (see the
    // pipeline benchmark for the whole path).
    {
      name: 'broadcast intake: Redis commands per request',
      value: rounded(intake.redis.commands, 2),
      unit: 'commands',
    },
    { name: 'broadcast intake: Redis bytes in per request', value: rounded(intake.redis.bytesIn), unit: 'bytes' },
    { name: 'broadcast intake: Redis bytes out per request', value: rounded(intake.redis.bytesOut), unit: 'bytes' },
  );

  // Acknowledged = durable, in alternating rounds as above: the same api with and without the WAIT per turn.
  await saturate(acknowledgedApi, replicatedPrimary.url);
  await saturate(replicatedApi, replicatedPrimary.url);
  const durability: { acknowledged: Saturation; replicated: Saturation }[] = [];
  for (let round = 0; round < DURABILITY_ROUNDS; round++) {
    if (round % 2 === 0)
      durability.push({
        acknowledged: await saturate(acknowledgedApi, replicatedPrimary.url),
        replicated: await saturate(replicatedApi, replicatedPrimary.url),
      });
    else {
      const replicated = await saturate(replicatedApi, replicatedPrimary.url);
      durability.push({ replicated, acknowledged: await saturate(acknowledgedApi, replicatedPrimary.url) });
    }
  }
  const meanOf = (pick: (round: (typeof durability)[number]) => Saturation) => ({
    rps: durability.reduce((total, round) => total + pick(round).rps, 0) / durability.length,
    p99: Math.max(...durability.map((round) => pick(round).p99)),
    errors: durability.reduce((total, round) => total + pick(round).errors, 0),
  });
  const acknowledged = meanOf((round) => round.acknowledged);
  const replicated = meanOf((round) => round.replicated);
  line(
    'broadcast intake, primary + 1 replica, acknowledged',
    `${acknowledged.rps.toFixed(0)} req/s, p99 ${acknowledged.p99} ms`,
  );
  line(
    'broadcast intake, same, REDIS_DURABILITY=replicated',
    `${replicated.rps.toFixed(0)} req/s, p99 ${replicated.p99} ms`,
  );
  line(
    `ratio replicated / acknowledged, median of ${DURABILITY_ROUNDS} rounds`,
    medianOf(durability.map((round) => round.replicated.rps / round.acknowledged.rps)),
  );
  line('non-2xx answers or errors (acknowledged, replicated)', `${acknowledged.errors}, ${replicated.errors}`);
  figures.push(
    ...rateAgainstBaseline(
      ['primary + 1 replica, acknowledged', acknowledged.rps],
      ['same, REDIS_DURABILITY=replicated', replicated.rps],
      durability.map((round) => round.replicated.rps / round.acknowledged.rps),
      'req/s',
    ),
    { name: 'replicated p99 (highest round)', value: replicated.p99, unit: 'ms' },
  );

  // Uploads in alternating rounds too, each of new bytes (a store may skip blocks it has).
  const direct = new EmbeddedStore(directDir);
  const uploads: { direct: number; api: number }[] = [];
  let peakGrowth = 0;
  let status = 0;
  for (let round = 0; round < UPLOAD_ROUNDS; round++) {
    const timeDirect = async () => {
      const started = performance.now();
      await direct.add(generatedBytes(UPLOAD_BYTES, 2 * round));
      return (performance.now() - started) / 1000;
    };
    const timeApi = async () => {
      api.resetPeak();
      const before = api.memory();
      const started = performance.now();
      status = (await streamUpload(api.url, UPLOAD_BYTES, { seed: 2 * round + 1 })).status;
      const seconds = (performance.now() - started) / 1000;
      peakGrowth = Math.max(peakGrowth, api.memory().peak - before.rss);
      return seconds;
    };
    if (round % 2 === 0) uploads.push({ direct: await timeDirect(), api: await timeApi() });
    else {
      const apiSeconds = await timeApi();
      uploads.push({ api: apiSeconds, direct: await timeDirect() });
    }
  }
  await direct.close();
  const mibPerSecond = (seconds: number) => (UPLOAD_BYTES / MiB / seconds).toFixed(0);
  const mean = (pick: (round: { direct: number; api: number }) => number) =>
    uploads.reduce((total, round) => total + pick(round), 0) / uploads.length;
  const size = `${(UPLOAD_BYTES / MiB).toFixed(0)} MiB`;
  line(`upload of ${size}, baseline: store.add directly`, `${mibPerSecond(mean((round) => round.direct))} MiB/s`);
  line('upload through POST /v2/asset/upload', `${mibPerSecond(mean((round) => round.api))} MiB/s (${status})`);
  line(
    `ratio api / direct, median of ${UPLOAD_ROUNDS} rounds (goal ≥ 0.8)`,
    medianOf(uploads.map((round) => round.direct / round.api)),
  );
  line('api peak RSS growth during an upload (goal < 64 MiB)', `${(peakGrowth / MiB).toFixed(1)} MiB`);
  figures.push(
    ...rateAgainstBaseline(
      ['baseline: store.add directly', UPLOAD_BYTES / MiB / mean((round) => round.direct)],
      ['upload through POST /v2/asset/upload', UPLOAD_BYTES / MiB / mean((round) => round.api)],
      uploads.map((round) => round.direct / round.api),
      'MiB/s',
      '≥ 0.8',
    ),
    { name: 'api peak RSS growth during an upload', value: rounded(peakGrowth / MiB, 1), unit: 'MiB', goal: '< 64' },
  );
  const written = writeBenchmarkResult({
    benchmark: 'content-publishing-api',
    title: 'Content publishing api: broadcast intake, durable acknowledgement, uploads',
    figures,
    notes: [
      `The api runs from ${compiled ? 'dist/ (compiled)' : 'src/ through tsx'}, as a process of its own. Intake: ` +
        `32 connections for ${INTAKE_SECONDS} s per round (BENCH_INTAKE_SECONDS), api and baseline in alternating ` +
        'rounds. Durability: the same api on a primary with one replica, with and without REDIS_DURABILITY=replicated.',
      `Uploads: ${size} each (BENCH_UPLOAD_BYTES), through the api and straight into an embedded store, alternating.`,
    ],
  });
  line('result', written);
} finally {
  await api.stop();
  await baselineServer.stop();
  await acknowledgedApi.stop();
  await replicatedApi.stop();
  await replica.stop();
  await replicatedPrimary.stop();
  for (const dir of durabilityDirs) rmSync(dir, { recursive: true, force: true });
  await devchain.close();
  await redis.stop();
  rmSync(apiDir, { recursive: true, force: true });
  rmSync(directDir, { recursive: true, force: true });
}
process.exit(0);
