import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../logging/index.js';
import type { LeaseLock } from './lease.js';

export interface LeadershipContext {
  /** Aborted when leadership is lost or the component stops; the loop must return soon after. */
  signal: AbortSignal;
  /** The lease's fencing token for this term. */
  token: number;
  /**
   * The loop says it moves on (a round done, a block scanned). With `stallAfterMs`, a leader whose loop has said
   * nothing for that long is stalled (see runAsLeader).
   */
  progress(): void;
}

export type LeaderLoop = (context: LeadershipContext) => Promise<void>;

export interface ElectionTiming {
  /** How long a lease lasts without renewal. client-go default: 15 s. */
  leaseDurationMs: number;
  /** How long a leader keeps trying to renew before it steps down. client-go default: 10 s. */
  renewDeadlineMs: number;
  /** How often candidates try to acquire and leaders renew. client-go default: 2 s. */
  retryPeriodMs: number;
}

export const DEFAULT_ELECTION_TIMING: ElectionTiming = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
};

export interface ElectionOptions {
  name: string;
  identity: string;
  lock: LeaseLock;
  logger: Logger;
  timing?: Partial<ElectionTiming>;
  onLeadershipChange?: (leading: boolean) => void;
  /**
   * For a loop that reports its progress: how long it may go without before its leader steps down (see
   * runAsLeader). Unset: the loop is not watched.
   */
  stallAfterMs?: number;
}

/** Where a replica stands on one lease, for /healthz. */
export interface LeaseStatus {
  leading: boolean;
  /** The store the lease lives in (e.g. `kubernetes lease gateway/gw-transaction-tracker`). */
  lock: string;
  /** Who holds the lease, when the last attempt said. */
  holder?: string;
  /** Since when this replica leads, or since when it has not (ISO 8601). */
  since: string;
  /** Why the last attempt failed, while attempts fail. */
  error?: string;
  /** Set while the loop of a term this replica led is stuck: since when it has reported no progress (ms). */
  stalledForMs?: number;
}

export interface Leadership {
  isLeader(): boolean;
  status(): LeaseStatus;
  /** True while a loop this replica led is stuck (it stepped down; the loop has not returned). */
  stalled(): boolean;
  /** Stops the loop (if leading), releases the lease and stops contending. */
  stop(): Promise<void>;
}

const jitter = (ms: number) => ms * (1 + Math.random() * 0.2);

/**
 * Runs `loop` on at most one replica at a time. Candidates try to acquire the lease every retry period; the
 * leader renews it every retry period and steps down (aborting the loop) when no renewal has succeeded within
 * the renew deadline, which is shorter than the lease, so a deposed leader stops before a successor starts.
 *
 * With `stallAfterMs`, the loop reports its progress (`context.progress()`); a leader whose loop has reported none
 * for that long is stuck on something that never answers. Renewing would keep every other replica from the work,
 * so it steps down at once: it stops renewing, aborts the loop's signal and gives the lease back without waiting
 * for the loop, and stays out of the election until the loop returns. `stalled()` says so meanwhile (the
 * component's /livez fails on it, so that Kubernetes restarts the process).
 */
export function runAsLeader(options: ElectionOptions, loop: LeaderLoop): Leadership {
  const timing = { ...DEFAULT_ELECTION_TIMING, ...options.timing };
  if (timing.renewDeadlineMs >= timing.leaseDurationMs)
    throw new Error('renewDeadlineMs must be shorter than leaseDurationMs');
  const log = options.logger.child({ lease: options.name });
  const stopping = new AbortController();
  let leading = false;
  let since = new Date();
  let holder: string | undefined;
  // Why attempts fail, while they do, and how many in a row. One failure is retried quietly (the very first
  // attempt can beat the store's connection); failing twice in a row is told once at warn, and so is the end.
  let failing: { error: string; attempts: number } | undefined;
  // Since when the loop of a stalled term has reported nothing, until it returns.
  let stalledSince: number | undefined;

  // An attempt that hangs (a store that does not answer) counts as failed, so the deadline still applies.
  const attempt = async () => {
    try {
      const timeout = sleep(timing.retryPeriodMs, undefined, { ref: false }).then(() => {
        throw new Error(`no answer from ${options.lock.description} within ${timing.retryPeriodMs} ms`);
      });
      const result = await Promise.race([
        options.lock.tryAcquireOrRenew(options.identity, timing.leaseDurationMs),
        timeout,
      ]);
      if (failing && failing.attempts >= 2) log.info({ lock: options.lock.description }, 'lease attempts work again');
      failing = undefined;
      holder = result.holder;
      return result;
    } catch (error) {
      failing = { error: (error as Error).message ?? String(error), attempts: (failing?.attempts ?? 0) + 1 };
      if (failing.attempts === 2) {
        log.warn(
          { err: error, lock: options.lock.description },
          'lease attempts fail: this replica cannot lead until they work again',
        );
      } else log.debug({ err: error }, 'lease attempt failed');
      return undefined;
    }
  };

  const lead = async (token: number) => {
    const term = new AbortController();
    const stopTerm = () => term.abort();
    stopping.signal.addEventListener('abort', stopTerm, { once: true });
    leading = true;
    since = new Date();
    options.onLeadershipChange?.(true);
    log.info({ token, lock: options.lock.description }, 'leading');
    let lastRenewal = Date.now();
    let lastProgress = Date.now();
    const progress = () => {
      lastProgress = Date.now();
    };
    const running = loop({ signal: term.signal, token, progress }).then(
      () => log.info('leader loop returned'),
      (error: unknown) => log.error({ err: error }, 'leader loop failed'),
    );
    const loopDone = running.then(() => term.abort());
    while (!term.signal.aborted) {
      await Promise.race([sleep(timing.retryPeriodMs, undefined, { ref: false }), loopDone]);
      if (term.signal.aborted) break;
      const { stallAfterMs } = options;
      if (stallAfterMs !== undefined && Date.now() - lastProgress >= stallAfterMs) {
        stalledSince = lastProgress;
        log.error(
          { stallAfterMs, lastProgress: new Date(lastProgress).toISOString() },
          'the leader loop made no progress in time: stepping down, and /livez fails until it returns',
        );
        term.abort();
        break;
      }
      const renewal = await attempt();
      if (renewal?.held) lastRenewal = Date.now();
      else if (renewal && !renewal.held) {
        log.warn({ holder: renewal.holder }, 'lease taken by another candidate; stepping down');
        term.abort();
      } else if (Date.now() - lastRenewal >= timing.renewDeadlineMs) {
        log.warn({ renewDeadlineMs: timing.renewDeadlineMs }, 'could not renew the lease in time; stepping down');
        term.abort();
      }
    }
    const stepDown = async () => {
      leading = false;
      since = new Date();
      options.onLeadershipChange?.(false);
      // Give the lease back at once so a successor need not wait for it to expire.
      await options.lock
        .release(options.identity)
        .catch((error: unknown) => log.debug({ err: error }, 'release failed'));
      log.info('no longer leading');
    };
    // A stuck loop is not waited for: the lease goes first, and this replica stays out until the loop returns.
    if (stalledSince !== undefined) {
      await stepDown();
      // Nor at shutdown: the component stops without it.
      const stopped = new Promise<void>((resolve) => stopping.signal.addEventListener('abort', () => resolve()));
      await Promise.race([running, stopping.signal.aborted ? undefined : stopped]);
    } else await running;
    stopping.signal.removeEventListener('abort', stopTerm);
    if (stalledSince === undefined) await stepDown();
    else {
      log.warn({ stalledForMs: Date.now() - stalledSince }, 'the stalled leader loop returned at last');
      stalledSince = undefined;
    }
  };

  const contend = (async () => {
    while (!stopping.signal.aborted) {
      const acquired = await attempt();
      if (acquired?.held && !stopping.signal.aborted) await lead(acquired.token);
      if (stopping.signal.aborted) break;
      await sleep(jitter(timing.retryPeriodMs), undefined, { signal: stopping.signal, ref: false }).catch(
        () => undefined,
      );
    }
  })();

  return {
    isLeader: () => leading,
    stalled: () => stalledSince !== undefined,
    status: () => ({
      leading,
      lock: options.lock.description,
      ...(holder ? { holder } : {}),
      since: since.toISOString(),
      ...(failing ? { error: failing.error } : {}),
      ...(stalledSince !== undefined ? { stalledForMs: Date.now() - stalledSince } : {}),
    }),
    stop: async () => {
      stopping.abort();
      await contend;
    },
  };
}
