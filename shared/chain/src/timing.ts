/**
 * Every duration the exactly-once protocol relies on (see docs/architecture.md, "The timing contract"). Each
 * part of the protocol reads its own from here: the tracker's record deadline and resubmission age, the nonce
 * manager's gap refill, the submitter's era, the signing workers' job lock.
 */
export interface ChainTimingSettings {
  /** How long `TransactionTracker.record` may take; later the caller does not submit and the scan does. */
  recordWithinMs: number;
  /**
   * The longest a submission (`author_submitExtrinsic`) is expected to take. Not enforced: a slower one only
   * races the scan's resubmission of the same bytes, which the pool refuses as already imported.
   */
  submissionMs: number;
  /** How old a recorded transaction in no block is before the scan submits it again (and again every as long). */
  resubmitAfterMs: number;
  /** How long the chain's next nonce may stand still behind reserved ones before the gap is refilled. */
  gapRefillMs: number;
  /** A transaction's mortal era, in blocks: a power of two (what a mortal era encodes). */
  eraPeriod: number;
  /** The chain's block time, to turn the era into time (the chain's own once connected). */
  blockTimeMs: number;
  /** The BullMQ lock of a signing job: a run that has not renewed it for this long is taken over by another. */
  jobLockMs: number;
  /** How often BullMQ looks for signing jobs whose lock lapsed. */
  stalledCheckMs: number;
}

const DEFAULTS: ChainTimingSettings = {
  recordWithinMs: 10_000,
  submissionMs: 5_000,
  resubmitAfterMs: 20_000,
  gapRefillMs: 30_000,
  eraPeriod: 64,
  blockTimeMs: 6_000,
  jobLockMs: 30_000,
  stalledCheckMs: 30_000,
};

/** A set of durations that breaks the contract: `relations` names each one broken, with the values. */
export class ChainTimingError extends RangeError {
  constructor(readonly relations: string[]) {
    super(`inconsistent chain timing: ${relations.join('; ')}`);
    this.name = 'ChainTimingError';
  }
}

/** What each relation asks; the values in it are named as in ChainTimingSettings. */
function brokenRelations(t: ChainTimingSettings): string[] {
  const broken: string[] = [];
  for (const [name, value] of Object.entries(t))
    if (!Number.isSafeInteger(value) || value <= 0) broken.push(`${name} (${value}) must be a positive whole number`);
  if (broken.length > 0) return broken;
  if (t.eraPeriod < 4 || t.eraPeriod > 65_536 || (t.eraPeriod & (t.eraPeriod - 1)) !== 0)
    broken.push(`eraPeriod (${t.eraPeriod}) must be a power of two from 4 to 65536, as a mortal era is`);
  if (t.resubmitAfterMs <= t.recordWithinMs + t.submissionMs)
    broken.push(
      `resubmitAfterMs (${t.resubmitAfterMs}) must be longer than recordWithinMs (${t.recordWithinMs}) plus submissionMs (${t.submissionMs}): the scan would submit again what a submitter is still submitting`,
    );
  if (t.gapRefillMs <= t.resubmitAfterMs)
    broken.push(
      `gapRefillMs (${t.gapRefillMs}) must be longer than resubmitAfterMs (${t.resubmitAfterMs}): a nonce gap would be refilled by another transaction before the scan submits the recorded one that holds it`,
    );
  const mortalityMs = t.eraPeriod * t.blockTimeMs;
  if (mortalityMs <= t.gapRefillMs + t.resubmitAfterMs)
    broken.push(
      `the era (eraPeriod ${t.eraPeriod} × blockTimeMs ${t.blockTimeMs} = ${mortalityMs} ms) must be longer than gapRefillMs (${t.gapRefillMs}) plus resubmitAfterMs (${t.resubmitAfterMs}): a transaction behind a nonce gap would expire before the gap is filled`,
    );
  if (t.stalledCheckMs > t.jobLockMs)
    broken.push(
      `stalledCheckMs (${t.stalledCheckMs}) must be at most jobLockMs (${t.jobLockMs}): a stalled job would wait longer for the check than for its lock to lapse`,
    );
  if (t.recordWithinMs * 2 > t.jobLockMs)
    broken.push(
      `recordWithinMs (${t.recordWithinMs}) must be at most half of jobLockMs (${t.jobLockMs}), BullMQ renewing a lock every half of it: a run whose record resolved in time would no longer be sure to hold its job`,
    );
  return broken;
}

/**
 * The timing contract of the exactly-once protocol: the durations above, checked together when the object is
 * built. An inconsistent set is refused with a ChainTimingError naming each relation broken:
 *
 * - resubmitAfterMs > recordWithinMs + submissionMs: the scan never submits again a transaction whose submitter is
 *   still at work (it only ever could send the same bytes, but the record deadline would mean nothing);
 * - gapRefillMs > resubmitAfterMs: a recorded transaction whose submitter let go of it fills its own nonce,
 *   before the nonce manager hands that nonce to another transaction;
 * - eraPeriod × blockTimeMs > gapRefillMs + resubmitAfterMs: a transaction signed behind a nonce gap outlives the
 *   wait for the gap to be filled;
 * - stalledCheckMs ≤ jobLockMs, and recordWithinMs ≤ jobLockMs / 2: a run whose record resolved in time still
 *   held its job's lock (BullMQ renews it every half of its duration), so no second run had started.
 */
export class ChainTiming implements Readonly<ChainTimingSettings> {
  /** The gateway's defaults, which keep every relation. */
  static readonly DEFAULT = new ChainTiming();

  readonly recordWithinMs: number;
  readonly submissionMs: number;
  readonly resubmitAfterMs: number;
  readonly gapRefillMs: number;
  readonly eraPeriod: number;
  readonly blockTimeMs: number;
  readonly jobLockMs: number;
  readonly stalledCheckMs: number;

  /** The defaults with `settings` over them; throws ChainTimingError when a relation is broken. */
  constructor(settings: Partial<ChainTimingSettings> = {}) {
    const given = Object.entries(settings).filter(([, value]) => value !== undefined);
    const timing: ChainTimingSettings = { ...DEFAULTS, ...Object.fromEntries(given) };
    const broken = brokenRelations(timing);
    if (broken.length > 0) throw new ChainTimingError(broken);
    this.recordWithinMs = timing.recordWithinMs;
    this.submissionMs = timing.submissionMs;
    this.resubmitAfterMs = timing.resubmitAfterMs;
    this.gapRefillMs = timing.gapRefillMs;
    this.eraPeriod = timing.eraPeriod;
    this.blockTimeMs = timing.blockTimeMs;
    this.jobLockMs = timing.jobLockMs;
    this.stalledCheckMs = timing.stalledCheckMs;
  }

  /** How long a transaction lives, its era turned into time. */
  get mortalityMs(): number {
    return this.eraPeriod * this.blockTimeMs;
  }

  /** The same contract on a chain whose block time is known (checked again). */
  onChain(blockTimeMs: number): ChainTiming {
    return blockTimeMs === this.blockTimeMs ? this : new ChainTiming({ ...this.settings(), blockTimeMs });
  }

  /** The BullMQ worker options of a job that signs transactions. */
  get jobLock(): { lockDuration: number; stalledInterval: number } {
    return { lockDuration: this.jobLockMs, stalledInterval: this.stalledCheckMs };
  }

  settings(): ChainTimingSettings {
    const { recordWithinMs, submissionMs, resubmitAfterMs, gapRefillMs } = this;
    const { eraPeriod, blockTimeMs, jobLockMs, stalledCheckMs } = this;
    return {
      recordWithinMs,
      submissionMs,
      resubmitAfterMs,
      gapRefillMs,
      eraPeriod,
      blockTimeMs,
      jobLockMs,
      stalledCheckMs,
    };
  }
}
