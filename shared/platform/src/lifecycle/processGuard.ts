import type { Logger } from '../logging/index.js';

/**
 * Whatever was thrown or rejected, as fields of a log line: an Error under `err` (with its stack), anything else
 * (an error event, a string) under `reason` with its type and message.
 */
export function failureFields(reason: unknown): { err: Error } | { reason: { type: string; message: string } } {
  if (reason instanceof Error) return { err: reason };
  const message = (reason as { message?: unknown } | null | undefined)?.message;
  const type = (reason as object | null | undefined)?.constructor?.name ?? typeof reason;
  return { reason: { type, message: typeof message === 'string' ? message : String(reason) } };
}

/**
 * A failure nobody handled leaves the process in a state nobody designed: log it with its cause, at fatal,
 * and exit 1 on purpose, so that Kubernetes restarts the pod and `kubectl logs --previous` says why — instead
 * of Node's opaque crash (`reason "#<ErrorEvent>"`) or, worse, a process that runs on half-broken.
 */
export function guardProcess(logger: Logger, exit: (code: number) => void = (code) => process.exit(code)): void {
  let exiting = false;
  const fail = (kind: string) => (reason: unknown) => {
    logger.fatal({ ...failureFields(reason), kind }, `${kind}: exiting so that the process is restarted`);
    if (exiting) return;
    exiting = true;
    exit(1);
  };
  process.on('unhandledRejection', fail('unhandled promise rejection'));
  process.on('uncaughtException', fail('uncaught exception'));
}
