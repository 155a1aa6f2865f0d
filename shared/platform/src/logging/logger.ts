import { pino, type Logger, type LoggerOptions } from 'pino';
import pretty from 'pino-pretty';

export type { Logger } from 'pino';

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Keys whose values are secret wherever they appear in a log record. */
const SECRET_PATHS = [
  'password',
  'secret',
  'token',
  'seedPhrase',
  'authorization',
  '*.password',
  '*.secret',
  '*.token',
  '*.seedPhrase',
  '*.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
];

export interface LoggerSettings {
  /** The component name, on every line. */
  component: string;
  level: LogLevel;
  pretty: boolean;
  /** Secret values (from the configuration) to scrub from every line, wherever they occur. */
  secrets?: readonly string[];
  /** Where lines go; stdout by default. Tests pass a stream to read them back. */
  destination?: NodeJS.WritableStream;
  base?: Record<string, unknown>;
  /**
   * Tracing is on: the ids of the span a line is written in (tracing's `activeTraceIds`), which the line then
   * carries as `trace_id` and `span_id`.
   */
  traceIds?: () => { trace_id: string; span_id: string } | undefined;
}

/**
 * Replaces every occurrence of the given secret values with `[redacted]`. The logger runs each line through
 * it; anything else that sends text out of the process (Kubernetes events, say) can use the same one.
 */
export function secretScrubber(secrets: readonly string[]): (text: string) => string {
  const needles = [...new Set(secrets)].filter((s) => s.length > 0).sort((a, b) => b.length - a.length);
  // JSON output escapes some characters, so scrub both the raw and the JSON-escaped form.
  const forms = [...new Set(needles.flatMap((s) => [s, JSON.stringify(s).slice(1, -1)]))];
  return (line) => forms.reduce((text, needle) => text.split(needle).join('[redacted]'), line);
}

export function createLogger(settings: LoggerSettings): Logger {
  const { traceIds } = settings;
  const scrub = settings.secrets?.some((s) => s.length > 0) ? secretScrubber(settings.secrets) : undefined;
  const options: LoggerOptions = {
    level: settings.level,
    base: { component: settings.component, ...settings.base },
    redact: { paths: SECRET_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    ...(scrub ? { hooks: { streamWrite: scrub } } : {}),
    // Only with tracing on: off, no line pays for looking up a span.
    ...(traceIds ? { mixin: () => traceIds() ?? {} } : {}),
  };
  const destination =
    settings.destination ??
    (settings.pretty
      ? pretty({ colorize: process.stdout.isTTY, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' })
      : pino.destination({ fd: 1, sync: true }));
  return pino(options, destination);
}
