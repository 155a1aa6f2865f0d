import type { Logger } from '../logging/index.js';

type Step = { name: string; run: (remainingMs: number) => Promise<unknown> | unknown };

export interface ShutdownOptions {
  logger: Logger;
  /** The whole shutdown must fit in this; Kubernetes sends SIGKILL 30 s after SIGTERM by default. */
  graceMs: number;
  exit?: (code: number) => void;
}

/**
 * Ordered, bounded shutdown. Steps run in the order they were registered, each given the time that is
 * left. A second signal, or running out of time, exits at once with code 1.
 */
export class Shutdown {
  private readonly steps: Step[] = [];
  private running?: Promise<number>;
  private readonly exit: (code: number) => void;
  private readonly started = new AbortController();
  /** Aborted when shutdown begins, so long-lived work (event streams, loops) can end early. */
  readonly signal: AbortSignal = this.started.signal;

  constructor(private readonly options: ShutdownOptions) {
    this.exit = options.exit ?? ((code) => process.exit(code));
  }

  step(name: string, run: Step['run']): this {
    this.steps.push({ name, run });
    return this;
  }

  installSignalHandlers(): void {
    const onSignal = (signal: NodeJS.Signals) => {
      if (this.running) {
        this.options.logger.warn({ signal }, 'second signal: exiting now');
        this.exit(1);
        return;
      }
      void this.run(signal).then((code) => this.exit(code));
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  }

  /** Runs every step once; later calls return the same outcome. Resolves to the exit code. */
  run(reason: string): Promise<number> {
    if (!this.running) this.started.abort();
    this.running ??= this.runSteps(reason);
    return this.running;
  }

  private async runSteps(reason: string): Promise<number> {
    const log = this.options.logger;
    const deadline = Date.now() + this.options.graceMs;
    log.info({ reason, graceMs: this.options.graceMs }, 'shutting down');
    const overtime = new Promise<'overtime'>((resolve) =>
      setTimeout(() => resolve('overtime'), this.options.graceMs).unref(),
    );
    for (const step of this.steps) {
      const started = Date.now();
      const outcome = await Promise.race([
        Promise.resolve()
          .then(() => step.run(Math.max(0, deadline - Date.now())))
          .then(
            () => 'done' as const,
            (error: unknown) => (log.error({ err: error, step: step.name }, 'shutdown step failed'), 'failed' as const),
          ),
        overtime,
      ]);
      if (outcome === 'overtime') {
        log.error({ step: step.name }, 'shutdown took longer than its grace period');
        return 1;
      }
      log.debug({ step: step.name, ms: Date.now() - started }, 'shutdown step done');
    }
    log.info('stopped');
    return 0;
  }
}
