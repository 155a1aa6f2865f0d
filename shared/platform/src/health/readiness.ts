import { Gauge, type Registry } from 'prom-client';
import type { Logger } from '../logging/index.js';

/** A dependency probe. It resolves when the dependency answers and rejects (or times out) when it does not. */
export interface ReadinessCheck {
  name: string;
  /** Required checks gate /readyz; optional ones are only reported. Default true. */
  required?: boolean;
  /** Safe facts shown in /healthz (a host and port, never credentials); read at each report, so it may change. */
  target?: string;
  probe: (signal: AbortSignal) => Promise<void>;
  intervalMs?: number;
  timeoutMs?: number;
}

export type CheckStatus = 'pending' | 'up' | 'down';

export interface CheckState {
  status: CheckStatus;
  required: boolean;
  target?: string;
  /** When the current status began (ISO 8601). */
  since: string;
  lastCheckedAt?: string;
  latencyMs?: number;
  error?: string;
}

export interface ReadinessSnapshot {
  ready: boolean;
  shuttingDown: boolean;
  checks: Record<string, CheckState>;
}

/**
 * A change the readiness controller noticed: one check's status (`check`), or the component's readiness as a
 * whole (`readiness`). Listeners hear each change once, in the order it happened, not one per poll.
 */
export type ReadinessTransition =
  | {
      kind: 'check';
      check: string;
      required: boolean;
      status: 'up' | 'down';
      was: CheckStatus;
      /** Why the check failed, as the probe said it (may quote a URL: scrub before it leaves the process). */
      error?: string;
    }
  | {
      kind: 'readiness';
      ready: boolean;
      shuttingDown: boolean;
      /** The required checks that keep the component from being ready, with their status. */
      failing: { check: string; status: CheckStatus }[];
    };

export type ReadinessListener = (transition: ReadinessTransition) => void;

export interface ReadinessOptions {
  logger: Logger;
  metrics?: Registry;
  intervalMs?: number;
  timeoutMs?: number;
}

class CheckTimeout extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
  }
}

function withTimeout(probe: (signal: AbortSignal) => Promise<void>, ms: number): Promise<void> {
  const controller = new AbortController();
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      controller.abort();
      reject(new CheckTimeout(ms));
    }, ms);
    probe(controller.signal).then(
      () => (clearTimeout(timer), resolve()),
      (error: unknown) => (clearTimeout(timer), reject(error)),
    );
  });
}

/**
 * Owns the component's readiness. Checks run in the background on their own timers, so /readyz
 * answers from memory at once and never waits on a dependency. A status change is logged once.
 */
export class ReadinessController {
  private readonly checks = new Map<string, { check: ReadinessCheck; state: CheckState; timer?: NodeJS.Timeout }>();
  private shuttingDown = false;
  private running = false;
  /** Stopped after running: its connections are closing, so a check that ends now says nothing about the dependency. */
  private stopped = false;
  private readonly gauge?: Gauge<'check'>;
  private readonly listeners = new Set<ReadinessListener>();
  /** Readiness as last told to listeners; a component starts out not ready. */
  private reportedReady = false;

  constructor(private readonly options: ReadinessOptions) {
    if (options.metrics) {
      this.gauge = new Gauge({
        name: 'readiness_check_up',
        help: '1 when the dependency check passes, 0 otherwise',
        labelNames: ['check'],
        registers: [options.metrics],
      });
      const isReady = () => this.isReady();
      new Gauge({
        name: 'readiness_ready',
        help: '1 when the component is ready (every required check up, not shutting down): what /readyz answers',
        registers: [options.metrics],
        collect() {
          this.set(isReady() ? 1 : 0);
        },
      });
    }
  }

  add(check: ReadinessCheck): this {
    if (this.checks.has(check.name)) throw new Error(`readiness check ${check.name} is already registered`);
    const state: CheckState = {
      status: 'pending',
      required: check.required ?? true,
      since: new Date().toISOString(),
      ...(check.target ? { target: check.target } : {}),
    };
    this.checks.set(check.name, { check, state });
    this.gauge?.set({ check: check.name }, 0);
    if (this.running) void this.run(check.name);
    return this;
  }

  /**
   * Calls `listener` on every transition (see ReadinessTransition); returns a function that stops it. A
   * listener runs synchronously and must not wait on anything: one that throws is logged and readiness goes on.
   */
  onTransition(listener: ReadinessListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopped = false;
    for (const name of this.checks.keys()) void this.run(name);
  }

  stop(): void {
    this.running = false;
    this.stopped = true;
    for (const entry of this.checks.values()) clearTimeout(entry.timer);
  }

  /** From now on the component reports not ready, so that traffic drains before it stops. */
  markShuttingDown(): void {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    this.options.logger.info('shutting down: readiness is now false');
    this.noticeReadiness();
  }

  isReady(): boolean {
    if (this.shuttingDown) return false;
    for (const { state } of this.checks.values()) if (state.required && state.status !== 'up') return false;
    return true;
  }

  snapshot(): ReadinessSnapshot {
    const checks: Record<string, CheckState> = {};
    for (const [name, { state }] of this.checks) checks[name] = { ...state };
    return { ready: this.isReady(), shuttingDown: this.shuttingDown, checks };
  }

  /** Runs one check now and waits for its verdict; useful at start-up and in tests. */
  async checkNow(name: string): Promise<CheckState> {
    await this.evaluate(name);
    const entry = this.checks.get(name);
    if (!entry) throw new Error(`no readiness check named ${name}`);
    return { ...entry.state };
  }

  private async run(name: string): Promise<void> {
    const entry = this.checks.get(name);
    if (!entry || !this.running) return;
    await this.evaluate(name);
    if (!this.running) return;
    entry.timer = setTimeout(() => void this.run(name), entry.check.intervalMs ?? this.options.intervalMs ?? 2000);
    entry.timer.unref();
  }

  private async evaluate(name: string): Promise<void> {
    const entry = this.checks.get(name);
    if (!entry) return;
    const started = performance.now();
    let error: string | undefined;
    try {
      await withTimeout(entry.check.probe, entry.check.timeoutMs ?? this.options.timeoutMs ?? 1500);
    } catch (failure) {
      error = failure instanceof Error ? failure.message : String(failure);
    }
    if (this.stopped) return;
    if (entry.check.target) entry.state.target = entry.check.target;
    this.record(name, entry.state, error, Math.round(performance.now() - started));
  }

  private record(name: string, state: CheckState, error: string | undefined, latencyMs: number): void {
    const status: CheckStatus = error === undefined ? 'up' : 'down';
    const now = new Date().toISOString();
    const was = state.status;
    if (status !== was) {
      const log = this.options.logger;
      if (status === 'up') log.info({ check: name, was }, `dependency ${name} is up`);
      else log.warn({ check: name, was, err: error }, `dependency ${name} is down: ${error}`);
      state.status = status;
      state.since = now;
    }
    state.lastCheckedAt = now;
    state.latencyMs = latencyMs;
    if (error === undefined) delete state.error;
    else state.error = error;
    this.gauge?.set({ check: name }, status === 'up' ? 1 : 0);
    // Listeners hear of a change once the state is complete, so that a snapshot taken then agrees with it.
    if (status !== was) {
      const required = state.required;
      this.tell({ kind: 'check', check: name, required, status, was, ...(error === undefined ? {} : { error }) });
    }
    this.noticeReadiness();
  }

  /** Tells listeners when readiness as a whole has flipped since they last heard. */
  private noticeReadiness(): void {
    const ready = this.isReady();
    if (ready === this.reportedReady) return;
    this.reportedReady = ready;
    const failing: { check: string; status: CheckStatus }[] = [];
    for (const [check, { state }] of this.checks) {
      if (state.required && state.status !== 'up') failing.push({ check, status: state.status });
    }
    this.tell({ kind: 'readiness', ready, shuttingDown: this.shuttingDown, failing });
  }

  private tell(transition: ReadinessTransition): void {
    for (const listener of this.listeners) {
      try {
        listener(transition);
      } catch (error) {
        this.options.logger.warn({ err: error, transition: transition.kind }, 'a readiness listener failed');
      }
    }
  }
}
