import { existsSync, readFileSync } from 'node:fs';
import { ApiException, type KubeConfig } from '@kubernetes/client-node';

/** Where a one-shot command (a Job's) writes its lines. */
export interface CommandOutput {
  out: (line: string) => void;
  err: (line: string) => void;
}

export const standardOutput: CommandOutput = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

export const statusOf = (error: unknown) => (error instanceof ApiException ? error.code : undefined);

/**
 * The API server's Status of a failed request as a sentence: code, reason and message. JSON objects in the message
 * are left out: the API server quotes a whole patched object (a Secret's data included) in some refusals.
 */
export function describeApiFailure(error: unknown): string {
  if (!(error instanceof ApiException)) return String((error as Error)?.message ?? error);
  let status: { reason?: string; message?: string } = {};
  const body: unknown = error.body;
  try {
    status = typeof body === 'string' ? (JSON.parse(body) as typeof status) : ((body ?? {}) as typeof status);
  } catch {
    // Not a Status: the code says enough.
  }
  const message = (status.message ?? '').replace(/\{.*\}/s, '{…}');
  return `the API server answered ${error.code}${status.reason ? ` ${status.reason}` : ''}${message ? `: ${message}` : ''}`;
}

const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/** The namespace to work in when none is given: the pod's own, else the kubeconfig context's, else `default`. */
export function namespaceOrDefault(kubeConfig: KubeConfig): string {
  if (existsSync(SERVICE_ACCOUNT_NAMESPACE)) return readFileSync(SERVICE_ACCOUNT_NAMESPACE, 'utf8').trim();
  return kubeConfig.getContextObject(kubeConfig.getCurrentContext())?.namespace ?? 'default';
}
