import type { BenchmarkFigure, BenchmarkResult } from '@frequency-gateway/devstack';
import { readResults } from '../src/measurementsPage.js';
import { costsFrom, DEFAULT_LOAD, plan, render } from '../src/sizing.js';

const result = (benchmark: string, figures: [string, number][]): BenchmarkResult => ({
  benchmark,
  title: benchmark,
  date: '2026-11-29T00:00:00.000Z',
  commit: { sha: '0'.repeat(40), dirty: false },
  machine: { cpus: 2, cpuModel: 'test', memoryGiB: 1, os: 'test', node: 'v20', loadAverage: [0, 0, 0] },
  figures: figures.map(([name, value]): BenchmarkFigure => ({ name, value, unit: '' })),
});

/** Round costs, so that what the plan must say can be worked out by hand. */
const RESULTS = [
  result('content-publishing-api', [['broadcast intake CPU per request', 400]]),
  result('content-publishing-pipeline', [
    ['CPU per broadcast: worker', 1000],
    ['CPU per broadcast: Redis', 500],
    ['CPU per broadcast: Kubo', 200],
    ['Redis commands per broadcast', 100],
    ['Redis bytes in per broadcast', 6000],
    ['Redis bytes out per broadcast', 4000],
    ['announcements per message', 1000],
    ['messages in them', 10],
    ['capacity transactions used', 1],
    ['Capacity per transaction', 2_000_000],
    ['peak RSS: api', 150],
    ['peak RSS: worker', 200],
  ]),
  result('account-sign-ups', [
    ['CPU per sign-up: api', 6000],
    ['CPU per sign-up: worker', 12000],
    ['CPU per sign-up: Redis', 2000],
    ['Redis commands per sign-up', 150],
    ['Redis bytes in per sign-up', 15000],
    ['Redis bytes out per sign-up', 5000],
    ['transactions per sign-up', 1],
    ['Capacity per transaction', 10_000_000],
  ]),
  result('content-watcher-deliveries', [
    ['announcements delivered per second', 2000],
    ['worker peak RSS', 250],
  ]),
];

describe('sizing calculator', () => {
  it('works out cores, replicas, Redis, the chain and the first limit from the per-request costs', () => {
    // 1,000 announcements a second and 86,400 sign-ups a day (one a second).
    const load = { ...DEFAULT_LOAD, signUpsPerDay: 86_400, announcementsPerSecond: 1000 };
    const result = plan(load, costsFrom(RESULTS));
    const row = (what: string) => result.rows.find((each) => each.what === what);
    expect(row('content-publishing api')).toMatchObject({ cores: 0.4, replicas: 2 });
    expect(row('content-publishing worker')).toMatchObject({ cores: 1, replicas: 2 }); // 1 / 0.6 → 2
    expect(row('account worker')).toMatchObject({ cores: 0.012, replicas: 1 });
    expect(row('content-watcher worker')?.replicas).toBe(1); // half a worker's rate at 60 %: 0.83 of one
    expect(result.redis.cores).toBeCloseTo(0.502);
    expect(result.redis.commandsPerSecond).toBeCloseTo(100_150);
    expect(result.redis.megabytesPerSecond).toBeCloseTo(10.02);
    // One message a second (1,000 announcements each), ten messages per transaction, 6-second blocks.
    expect(result.chain.messagesPerBlock).toBeCloseTo(6);
    expect(result.chain.transactionsPerBlock).toBeCloseTo(0.6 + 6);
    // Per 100-block epoch (600 s): 60 publishing transactions at 2e6 and 600 sign-ups at 1e7.
    expect(result.chain.capacityPerEpoch).toBeCloseTo(60 * 2e6 + 600 * 1e7);
    expect(result.chain.stakeFrqcy).toBeCloseTo((60 * 2e6 + 600 * 1e7) / 0.02 / 1e8);
    expect(result.limit.what).toMatch(/Redis/);
    expect(result.limit.atMultiple).toBeCloseTo(1 / 0.502);
    expect(render(load, result)).toMatch(/First limit as the load grows: Redis CPU \(one core\), at 1\.99 × this load/);
  });

  it('names every missing figure and the benchmark that measures it', () => {
    expect(() => costsFrom(RESULTS.filter((each) => each.benchmark !== 'account-sign-ups'))).toThrow(
      /account-sign-ups: "CPU per sign-up: api" \(run npm run bench -w services\/account\)/,
    );
  });

  it("works from the repository's own results (docs/measurements)", () => {
    const costs = costsFrom(readResults());
    expect(costs.intakeCpuUs).toBeGreaterThan(0);
    expect(costs.signUp.transactions).toBeGreaterThan(0);
  });
});
