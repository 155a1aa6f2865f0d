// The sizing calculator (docs/sizing.md): for N sign-ups a day and M announcements a second, what each component,
// Redis, Kubo and the chain must carry, from the per-request costs the benchmarks measured (docs/measurements/*.json,
// written by `make bench`). Nothing here is a figure of its own: a cost missing from the results names the
// benchmark that measures it.
//   npx tsx tools/src/sizing.ts --sign-ups-per-day 20000 --announcements-per-second 50
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import type { BenchmarkResult } from '@frequency-gateway/devstack';
import { readResults } from './measurementsPage.js';

/** What the provider expects. */
export interface Load {
  signUpsPerDay: number;
  announcementsPerSecond: number;
  /** Webhook deliveries the content watcher makes per announcement (registered receivers that want it). */
  webhooksPerAnnouncement: number;
  /** The chain's `capacity.epochLength`, in blocks (the runtime's default is 100). */
  epochBlocks: number;
  blockSeconds: number;
  /** The share of a core each process is planned to use at this load (room for bursts, GC and restarts). */
  utilisation: number;
}

export const DEFAULT_LOAD: Omit<Load, 'signUpsPerDay' | 'announcementsPerSecond'> = {
  webhooksPerAnnouncement: 1,
  epochBlocks: 100,
  blockSeconds: 6,
  utilisation: 0.6,
};

/** Frequency issues 2 % of the staked amount as Capacity each epoch (the runtime's CapacityPerToken). */
const CAPACITY_PER_TOKEN = 0.02;
/** FRQCY has 8 decimals. */
const PLANCK_PER_FRQCY = 1e8;

/** The per-request costs the calculator works from, each read from a benchmark's result file. */
export interface Costs {
  intakeCpuUs: number;
  publishing: {
    workerCpuUs: number;
    redisCpuUs: number;
    kuboCpuUs: number;
    redisCommands: number;
    redisBytes: number;
    announcementsPerMessage: number;
    messagesPerTransaction: number;
    capacityPerTransaction: number;
    apiPeakMiB: number;
    workerPeakMiB: number;
  };
  signUp: {
    apiCpuUs: number;
    workerCpuUs: number;
    redisCpuUs: number;
    redisCommands: number;
    redisBytes: number;
    transactions: number;
    capacityPerTransaction: number;
  };
  watcher: { deliveriesPerSecond: number; peakMiB: number };
}

const BENCHMARK_OF: Record<string, string> = {
  'content-publishing-api': 'npm run bench -w services/content-publishing (bench/run.ts)',
  'content-publishing-pipeline': 'npm run bench -w services/content-publishing (bench/pipeline.ts)',
  'account-sign-ups': 'npm run bench -w services/account',
  'content-watcher-deliveries': 'npm run bench -w services/content-watcher',
};

/** Reads the costs from the results; throws naming every missing figure and the benchmark that writes it. */
export function costsFrom(results: readonly BenchmarkResult[]): Costs {
  const missing: string[] = [];
  const figure = (benchmark: string, name: string): number => {
    const value = results.find((result) => result.benchmark === benchmark)?.figures.find((f) => f.name === name)?.value;
    if (value === undefined) {
      missing.push(`${benchmark}: "${name}" (run ${BENCHMARK_OF[benchmark] ?? benchmark})`);
      return Number.NaN;
    }
    return value;
  };
  const pipeline = (name: string) => figure('content-publishing-pipeline', name);
  const signUps = (name: string) => figure('account-sign-ups', name);
  const costs: Costs = {
    intakeCpuUs: figure('content-publishing-api', 'broadcast intake CPU per request'),
    publishing: {
      workerCpuUs: pipeline('CPU per broadcast: worker'),
      redisCpuUs: pipeline('CPU per broadcast: Redis'),
      kuboCpuUs: pipeline('CPU per broadcast: Kubo'),
      redisCommands: pipeline('Redis commands per broadcast'),
      redisBytes: pipeline('Redis bytes in per broadcast') + pipeline('Redis bytes out per broadcast'),
      announcementsPerMessage: pipeline('announcements per message'),
      messagesPerTransaction: pipeline('messages in them') / pipeline('capacity transactions used'),
      capacityPerTransaction: pipeline('Capacity per transaction'),
      apiPeakMiB: pipeline('peak RSS: api'),
      workerPeakMiB: pipeline('peak RSS: worker'),
    },
    signUp: {
      apiCpuUs: signUps('CPU per sign-up: api'),
      workerCpuUs: signUps('CPU per sign-up: worker'),
      redisCpuUs: signUps('CPU per sign-up: Redis'),
      redisCommands: signUps('Redis commands per sign-up'),
      redisBytes: signUps('Redis bytes in per sign-up') + signUps('Redis bytes out per sign-up'),
      transactions: signUps('transactions per sign-up'),
      capacityPerTransaction: signUps('Capacity per transaction'),
    },
    watcher: {
      deliveriesPerSecond: figure('content-watcher-deliveries', 'announcements delivered per second'),
      peakMiB: figure('content-watcher-deliveries', 'worker peak RSS'),
    },
  };
  if (missing.length > 0)
    throw new Error(`the sizing needs figures no benchmark result has yet:\n  ${missing.join('\n  ')}`);
  return costs;
}

export interface Row {
  what: string;
  /** Cores of CPU at the load (unplanned: 100 % use). */
  cores?: number;
  /** Replicas (processes) at the planned utilisation. */
  replicas?: number;
  note: string;
}

export interface Plan {
  rows: Row[];
  redis: { commandsPerSecond: number; megabytesPerSecond: number; cores: number };
  chain: {
    transactionsPerBlock: number;
    messagesPerBlock: number;
    capacityPerEpoch: number;
    stakeFrqcy: number;
  };
  /** The resource that runs out first as the load grows, and at what multiple of this load. */
  limit: { what: string; atMultiple: number };
}

const cores = (perSecond: number, microseconds: number) => (perSecond * microseconds) / 1e6;

export function plan(load: Load, costs: Costs): Plan {
  const signUpsPerSecond = load.signUpsPerDay / 86_400;
  const m = load.announcementsPerSecond;
  // At least the chart's defaults: two of each api (a PodDisruptionBudget keeps one), one of each worker.
  const replicas = (needed: number, least = 1) => Math.max(least, Math.ceil(needed / load.utilisation));
  const intake = cores(m, costs.intakeCpuUs);
  const publishingWorker = cores(m, costs.publishing.workerCpuUs);
  const accountApi = cores(signUpsPerSecond, costs.signUp.apiCpuUs);
  const accountWorker = cores(signUpsPerSecond, costs.signUp.workerCpuUs);
  const deliveries = m * load.webhooksPerAnnouncement;
  const watcherShare = deliveries / costs.watcher.deliveriesPerSecond;
  const redisCores = cores(m, costs.publishing.redisCpuUs) + cores(signUpsPerSecond, costs.signUp.redisCpuUs);
  const rows: Row[] = [
    {
      what: 'content-publishing api',
      cores: intake,
      replicas: replicas(intake, 2),
      note: `${costs.intakeCpuUs} µs per request; peak RSS seen ${costs.publishing.apiPeakMiB} MiB`,
    },
    {
      what: 'content-publishing worker',
      cores: publishingWorker,
      replicas: replicas(publishingWorker),
      note: `${costs.publishing.workerCpuUs} µs per announcement; peak RSS seen ${costs.publishing.workerPeakMiB} MiB`,
    },
    {
      what: 'account api',
      cores: accountApi,
      replicas: replicas(accountApi, 2),
      note: `${costs.signUp.apiCpuUs} µs per sign-up (look-ups and logins come on top)`,
    },
    {
      what: 'account worker',
      cores: accountWorker,
      replicas: replicas(accountWorker),
      note: `${costs.signUp.workerCpuUs} µs per sign-up`,
    },
    {
      what: 'content-watcher worker',
      replicas: replicas(watcherShare),
      note:
        `${deliveries.toFixed(1)} deliveries/s; one worker delivered ${costs.watcher.deliveriesPerSecond}/s to a ` +
        `quick receiver (slower receivers: raise WEBHOOK_CONCURRENCY); peak RSS seen ${costs.watcher.peakMiB} MiB`,
    },
    {
      what: 'Kubo',
      cores: cores(m, costs.publishing.kuboCpuUs),
      note: `${costs.publishing.kuboCpuUs} µs per announcement (batch files and uploads)`,
    },
    {
      what: 'Redis',
      cores: redisCores,
      note:
        "single-threaded: one core carries every service on the chart's one Redis, and on a Redis Cluster each " +
        "service's keys still sit on one node (their hash tag); past one core it is the limit, whatever the replicas",
    },
  ];
  const messagesPerSecond = m / costs.publishing.announcementsPerMessage;
  const publishTxPerSecond = messagesPerSecond / costs.publishing.messagesPerTransaction;
  const signUpTxPerSecond = signUpsPerSecond * costs.signUp.transactions;
  const blocksPerEpoch = load.epochBlocks;
  const capacityPerEpoch =
    (publishTxPerSecond * costs.publishing.capacityPerTransaction +
      signUpTxPerSecond * costs.signUp.capacityPerTransaction) *
    load.blockSeconds *
    blocksPerEpoch;
  // How far the load can grow before each resource is used up: Redis at one core, the chain at the messages a
  // block can index (a u16 per block).
  const limits = [
    { what: 'Redis CPU (one core)', atMultiple: 1 / redisCores },
    { what: "the chain's messages per block (65,535)", atMultiple: 65_535 / (messagesPerSecond * load.blockSeconds) },
  ].filter((limit) => Number.isFinite(limit.atMultiple));
  return {
    rows,
    redis: {
      commandsPerSecond: m * costs.publishing.redisCommands + signUpsPerSecond * costs.signUp.redisCommands,
      megabytesPerSecond: (m * costs.publishing.redisBytes + signUpsPerSecond * costs.signUp.redisBytes) / 1e6,
      cores: redisCores,
    },
    chain: {
      transactionsPerBlock: (publishTxPerSecond + signUpTxPerSecond) * load.blockSeconds,
      messagesPerBlock: messagesPerSecond * load.blockSeconds,
      capacityPerEpoch,
      stakeFrqcy: capacityPerEpoch / CAPACITY_PER_TOKEN / PLANCK_PER_FRQCY,
    },
    limit: limits.sort((a, b) => a.atMultiple - b.atMultiple)[0] ?? { what: 'nothing measured', atMultiple: Infinity },
  };
}

const fixed = (value: number, digits = 2) =>
  value >= 100 ? Math.round(value).toLocaleString('en-US') : value.toFixed(digits);

export function render(load: Load, result: Plan): string {
  const lines = [
    `Load: ${load.signUpsPerDay.toLocaleString('en-US')} sign-ups a day, ${load.announcementsPerSecond} announcements ` +
      `a second, ${load.webhooksPerAnnouncement} webhook(s) per announcement; planned CPU use ${load.utilisation * 100} % ` +
      'per process.',
    '',
    '| component | cores at this load | replicas | from |',
    '| --- | --- | --- | --- |',
    ...result.rows.map(
      (row) =>
        `| ${row.what} | ${row.cores === undefined ? '' : fixed(row.cores, 3)} | ${row.replicas ?? ''} | ${row.note} |`,
    ),
    '',
    `Redis: ${fixed(result.redis.commandsPerSecond)} commands/s, ${fixed(result.redis.megabytesPerSecond)} MB/s ` +
      `of traffic, ${fixed(result.redis.cores, 3)} of a core.`,
    `Chain: ${fixed(result.chain.transactionsPerBlock)} transactions and ${fixed(result.chain.messagesPerBlock)} ` +
      `messages per ${load.blockSeconds}-second block; Capacity ${fixed(result.chain.capacityPerEpoch, 0)} per ` +
      `${load.epochBlocks}-block epoch, which ${fixed(result.chain.stakeFrqcy)} FRQCY staked to the provider ` +
      'issues (2 % of the stake per epoch).',
    `First limit as the load grows: ${result.limit.what}, at ${fixed(result.limit.atMultiple)} × this load.`,
  ];
  return lines.join('\n');
}

function main(): void {
  const { values } = parseArgs({
    options: {
      'sign-ups-per-day': { type: 'string' },
      'announcements-per-second': { type: 'string' },
      'webhooks-per-announcement': { type: 'string' },
      'epoch-blocks': { type: 'string' },
      utilisation: { type: 'string' },
    },
  });
  const number = (name: keyof typeof values, fallback?: number): number => {
    const given = values[name];
    if (given === undefined && fallback !== undefined) return fallback;
    const value = Number(given);
    if (given === undefined || !Number.isFinite(value) || value < 0) {
      process.stderr.write(`--${name}: give a number ≥ 0\n`);
      process.exit(2);
    }
    return value;
  };
  const load: Load = {
    signUpsPerDay: number('sign-ups-per-day'),
    announcementsPerSecond: number('announcements-per-second'),
    webhooksPerAnnouncement: number('webhooks-per-announcement', DEFAULT_LOAD.webhooksPerAnnouncement),
    epochBlocks: number('epoch-blocks', DEFAULT_LOAD.epochBlocks),
    blockSeconds: DEFAULT_LOAD.blockSeconds,
    utilisation: number('utilisation', DEFAULT_LOAD.utilisation),
  };
  process.stdout.write(`${render(load, plan(load, costsFrom(readResults())))}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
