/**
 * Watches the event loop with a heartbeat timer. A process whose loop is blocked cannot run the timer, so
 * the measured delay grows; /livez fails once it passes the limit. Besides that, only a part that never got
 * started (StartupWatch, below) makes a process "not live": a dependency outage is a readiness matter, and
 * restarting the process would not fix it.
 */
export class EventLoopWatch {
  private last = performance.now();
  private worstRecentDelayMs = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly maxDelayMs: number,
    private readonly tickMs = 500,
  ) {
    this.timer = setInterval(() => {
      const now = performance.now();
      this.worstRecentDelayMs = Math.max(0, now - this.last - this.tickMs);
      this.last = now;
    }, tickMs);
    this.timer.unref();
  }

  /** How late the heartbeat is right now, or was at its last beat, whichever is worse. */
  delayMs(): number {
    const sinceBeat = performance.now() - this.last - this.tickMs;
    return Math.round(Math.max(this.worstRecentDelayMs, sinceBeat, 0));
  }

  isLive(): boolean {
    return this.delayMs() <= this.maxDelayMs;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/** A part of the component still starting: for how long, its limit, and why its last attempt failed. */
export interface StartingPart {
  name: string;
  startingForMs: number;
  limitMs?: number;
  problem?: string;
}

/** What a starting part reports: each failed attempt's reason, and that it runs at last. */
export interface StartReport {
  failed(problem: string): void;
  started(): void;
}

/**
 * Parts of a component that start after it (a worker's chain pipeline), retrying for as long as it takes. A part
 * that has not started `maxStartMs` after it began makes /livez fail, so that Kubernetes restarts a process that
 * is stuck unready for good, while an outage shorter than that (a chain away for a few minutes) restarts nothing.
 * Without a limit (api components) a starting part is only reported.
 */
export class StartupWatch {
  private readonly parts = new Map<string, { since: number; problem?: string }>();

  constructor(private readonly maxStartMs?: number) {}

  /** `name` begins to start now; the returned report ends the watch when it has started. */
  begin(name: string): StartReport {
    const part: { since: number; problem?: string } = { since: performance.now() };
    this.parts.set(name, part);
    return {
      failed: (problem) => {
        part.problem = problem;
      },
      started: () => {
        if (this.parts.get(name) === part) this.parts.delete(name);
      },
    };
  }

  starting(): StartingPart[] {
    const now = performance.now();
    return [...this.parts].map(([name, part]) => ({
      name,
      startingForMs: Math.round(now - part.since),
      ...(this.maxStartMs === undefined ? {} : { limitMs: this.maxStartMs }),
      ...(part.problem === undefined ? {} : { problem: part.problem }),
    }));
  }

  /** Parts still not started past the limit: the process counts as stuck. */
  overdue(): StartingPart[] {
    const limit = this.maxStartMs;
    return limit === undefined ? [] : this.starting().filter((part) => part.startingForMs > limit);
  }
}
