import { format } from 'node:util';
import type { Logger } from './logger.js';

const LEVELS = { debug: 'debug', log: 'info', info: 'info', warn: 'warn', error: 'error', trace: 'debug' } as const;
/** A timestamp some libraries put in front of their console lines; the log line has its own. */
const LEADING_TIME = /^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?Z?\s+/;

export interface ConsoleRouteOptions {
  /** A message repeated within this window is logged once; its first line after the window counts the repeats left out. */
  repeatWindowMs?: number;
  now?: () => number;
}

/**
 * Sends what libraries print with `console.*` through the component's logger: JSON lines with the component's
 * name and the secrets scrubbed, instead of bare text between them. A library that retries prints the same
 * line on every attempt (a client reconnecting every few seconds); each distinct message is logged at most once
 * per window, and the repeats left out are counted on its next line.
 */
export function routeConsoleToLogger(logger: Logger, options: ConsoleRouteOptions = {}): void {
  const windowMs = options.repeatWindowMs ?? 60_000;
  const now = options.now ?? Date.now;
  const log = logger.child({ source: 'console' });
  const recent = new Map<string, { since: number; repeated: number }>();
  for (const [method, level] of Object.entries(LEVELS) as [
    keyof typeof LEVELS,
    (typeof LEVELS)[keyof typeof LEVELS],
  ][]) {
    // eslint-disable-next-line no-console -- replacing the console's methods is this function's job
    console[method] = (...args: unknown[]) => {
      const message = format(...args).replace(LEADING_TIME, '');
      const seen = recent.get(message);
      const at = now();
      if (seen && at - seen.since < windowMs) {
        seen.repeated += 1;
        return;
      }
      if (recent.size >= 200) recent.clear();
      recent.set(message, { since: at, repeated: 0 });
      log[level](seen?.repeated ? { repeated: seen.repeated } : {}, message);
    };
  }
}
