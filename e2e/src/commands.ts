import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { findTool } from '@frequency-gateway/devstack';

/** The repository's root: the cluster scripts (dev/cluster, dev/images) and the chart live under it. */
export const REPOSITORY = fileURLToPath(new URL('../../', import.meta.url));
export const CHART = `${REPOSITORY}charts/frequency-gateway`;
/** The local cluster's kubectl on its kubeconfig (dev/cluster/kubectl). */
export const KUBECTL = `${REPOSITORY}dev/cluster/kubectl`;

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CommandOptions {
  /** Written to the command's stdin. */
  input?: string;
  /** SIGTERM after this long (default 10 minutes); the result then says so. */
  timeoutMs?: number;
  env?: Record<string, string>;
  cwd?: string;
}

/** Runs a command to its end; resolves with its exit code and output whatever the code. */
export function run(command: string, args: string[], options: CommandOptions = {}): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd ?? REPOSITORY,
      env: { ...process.env, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      stderr += `\n(stopped after ${options.timeoutMs} ms)`;
      child.kill('SIGTERM');
    }, options.timeoutMs ?? 600_000);
    child.once('error', (error) => (clearTimeout(timer), reject(error)));
    child.once('close', (code) => (clearTimeout(timer), resolve({ code, stdout, stderr })));
    // A command that ends without reading its input closes the pipe (EPIPE): its exit code says how it went.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}

/** Runs a command that must succeed; resolves with its stdout, or fails with what it printed. */
export async function must(command: string, args: string[], options: CommandOptions = {}): Promise<string> {
  const result = await run(command, args, options);
  if (result.code !== 0) {
    const name = command.slice(command.lastIndexOf('/') + 1);
    throw new Error(`${name} ${args.join(' ')} failed (${result.code}):\n${result.stderr}${result.stdout}`.trim());
  }
  return result.stdout;
}

/** Helm 4 from the tool cache (`make tools`), or HELM_BIN. */
export function helmBinary(): string | undefined {
  return findTool('helm', 'HELM_BIN');
}

export const kubectl = (args: string[], options: CommandOptions = {}) => must(KUBECTL, args, options);

const settings = new Map<string, string>();

/** A setting of the local cluster's scripts (dev/cluster/lib.sh), e.g. CLUSTER_KUBECONFIG, as they compute it. */
export async function clusterSetting(name: string): Promise<string> {
  const known = settings.get(name);
  if (known) return known;
  const value = (await must('bash', ['-c', `source dev/cluster/lib.sh && printf %s "$${name}"`])).trim();
  if (!value) throw new Error(`dev/cluster/lib.sh sets no ${name}`);
  settings.set(name, value);
  return value;
}

/** Runs `ctr` on the local cluster's containerd, in the namespace of its Kubernetes images (lib.sh's ctr_cluster). */
export const ctrCluster = (args: string[]) =>
  run('bash', ['-c', 'source dev/cluster/lib.sh && ctr_cluster "$@"', 'ctr_cluster', ...args]);
