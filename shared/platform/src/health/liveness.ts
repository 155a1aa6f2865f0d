/**
 * Watches the event loop with a heartbeat timer. A process whose loop is blocked cannot run the timer, so
 * the measured delay grows; /livez fails once it passes the limit. Nothing else makes a process "not live":
 * a dependency outage is a readiness matter, and restarting the process would not fix it.
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
