import { readFileSync } from 'node:fs';
import { createLogger, JobQueues, parseConfig } from '@frequency-gateway/platform';
import { startRedisServer, type LocalRedis } from '@frequency-gateway/devstack';
import { Registry } from 'prom-client';
import {
  ChainTiming,
  ChainTimingError,
  chainTiming,
  submissionVariables,
  type ChainTimingSettings,
} from '../src/index.js';

/** The message of the ChainTimingError that `settings` are refused with (fails when they are accepted). */
const refusal = (settings: Partial<ChainTimingSettings>): string => {
  try {
    new ChainTiming(settings);
  } catch (error) {
    expect(error).toBeInstanceOf(ChainTimingError);
    return (error as Error).message;
  }
  throw new Error(`accepted: ${JSON.stringify(settings)}`);
};

describe('the timing contract', () => {
  it('accepts its defaults, the durations the protocol was built on', () => {
    expect(new ChainTiming().settings()).toEqual(ChainTiming.DEFAULT.settings());
    const { recordWithinMs, submissionMs, resubmitAfterMs, gapRefillMs, eraPeriod, blockTimeMs } = ChainTiming.DEFAULT;
    expect([recordWithinMs, submissionMs, resubmitAfterMs, gapRefillMs]).toEqual([10_000, 5_000, 20_000, 30_000]);
    expect([eraPeriod, blockTimeMs]).toEqual([64, 6_000]);
    expect(ChainTiming.DEFAULT.mortalityMs).toBe(384_000);
    expect(ChainTiming.DEFAULT.jobLock).toEqual({ lockDuration: 30_000, stalledInterval: 30_000 });
  });

  it('is documented with its defaults in docs/architecture.md', () => {
    const page = readFileSync(new URL('../../../docs/architecture.md', import.meta.url), 'utf8');
    const { blockTimeMs, eraPeriod, ...durations } = ChainTiming.DEFAULT.settings();
    expect(page).toMatch(new RegExp(`\\| \`eraPeriod\` +\\| ${eraPeriod} blocks +\\|`));
    expect(page).toContain(`(${blockTimeMs / 1000} s, the chain's)`);
    for (const [name, ms] of Object.entries(durations))
      expect(page).toMatch(new RegExp(`\\| \`${name}\` +\\| ${ms / 1000} s +\\|`));
  });

  it.each<[string, Partial<ChainTimingSettings>, string]>([
    [
      'resubmission within the record deadline and a submission',
      { resubmitAfterMs: 14_000 },
      'resubmitAfterMs (14000) must be longer than recordWithinMs (10000) plus submissionMs (5000)',
    ],
    [
      'a gap refilled before the resubmission',
      { gapRefillMs: 20_000 },
      'gapRefillMs (20000) must be longer than resubmitAfterMs (20000)',
    ],
    [
      'an era shorter than the gap refill and the resubmission',
      { eraPeriod: 8 },
      'the era (eraPeriod 8 × blockTimeMs 6000 = 48000 ms) must be longer than gapRefillMs (30000) plus resubmitAfterMs (20000)',
    ],
    [
      'a stalled check slower than the lock',
      { stalledCheckMs: 40_000 },
      'stalledCheckMs (40000) must be at most jobLockMs (30000)',
    ],
    [
      'a lock shorter than twice the record deadline',
      { jobLockMs: 19_000, stalledCheckMs: 10_000 },
      'recordWithinMs (10000) must be at most half of jobLockMs (19000)',
    ],
    ['an era that is no power of two', { eraPeriod: 100 }, 'eraPeriod (100) must be a power of two from 4 to 65536'],
    ['a duration that is not a positive whole number', { recordWithinMs: 0 }, 'recordWithinMs (0) must be a positive'],
    ['a fraction', { blockTimeMs: 6_000.5 }, 'blockTimeMs (6000.5) must be a positive whole number'],
  ])('refuses %s, naming the relation', (_case, settings, message) => {
    expect(refusal(settings)).toContain(message);
  });

  it('names every relation broken at once', () => {
    const message = refusal({ jobLockMs: 10_000, gapRefillMs: 15_000 });
    expect(message).toContain('gapRefillMs (15000) must be longer than resubmitAfterMs (20000)');
    expect(message).toContain('stalledCheckMs (30000) must be at most jobLockMs (10000)');
    expect(message).toContain('recordWithinMs (10000) must be at most half of jobLockMs (10000)');
  });

  it("is checked again with the chain's block time", () => {
    expect(ChainTiming.DEFAULT.onChain(6_000)).toBe(ChainTiming.DEFAULT);
    expect(ChainTiming.DEFAULT.onChain(12_000).mortalityMs).toBe(768_000);
    expect(() => ChainTiming.DEFAULT.onChain(500)).toThrow(
      'the era (eraPeriod 64 × blockTimeMs 500 = 32000 ms) must be longer than gapRefillMs (30000) plus resubmitAfterMs (20000)',
    );
  });

  it("is built from a submitting worker's variables, and refuses what breaks it", () => {
    const spec = submissionVariables();
    expect(chainTiming(parseConfig(spec, {}))).toEqual(ChainTiming.DEFAULT);
    const tuned = chainTiming(
      parseConfig(spec, {
        TRANSACTION_ERA_BLOCKS: '128',
        SIGNING_JOB_LOCK_MS: '60000',
        SIGNING_JOB_STALLED_CHECK_MS: '15000',
      }),
    );
    expect(tuned.settings()).toEqual({
      ...ChainTiming.DEFAULT.settings(),
      eraPeriod: 128,
      jobLockMs: 60_000,
      stalledCheckMs: 15_000,
    });
    expect(() => chainTiming(parseConfig(spec, { SIGNING_JOB_LOCK_MS: '15000' }))).toThrow(
      /stalledCheckMs \(30000\) must be at most jobLockMs \(15000\).*recordWithinMs \(10000\) must be at most half of jobLockMs \(15000\)/,
    );
    expect(() => chainTiming(parseConfig(spec, { TRANSACTION_ERA_BLOCKS: '96' }))).toThrow(
      'eraPeriod (96) must be a power of two',
    );
  });

  describe('a signing worker', () => {
    let redis: LocalRedis;
    let queues: JobQueues;
    beforeAll(async () => {
      redis = await startRedisServer();
      queues = new JobQueues({
        redis: redis.url,
        keyPrefix: '{timing}',
        logger: createLogger({ component: 'timing-test', level: 'silent', pretty: false }),
        metrics: new Registry(),
      });
    });
    afterAll(async () => {
      await queues?.close(0);
      await redis?.stop();
    });

    it("takes its job lock and stalled check from the contract's", async () => {
      const timing = new ChainTiming({ jobLockMs: 45_000, stalledCheckMs: 20_000 });
      const worker = queues.worker('sign', async () => undefined, { ...timing.jobLock, concurrency: 2 });
      expect(worker.opts).toMatchObject({ lockDuration: 45_000, stalledInterval: 20_000, lockRenewTime: 22_500 });
    });
  });
});
