import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { freePort } from './freePort.js';

/** How a process ended: its exit code, or the signal that ended it. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** An HTTP server (a component of the gateway, a stand-in) as a process of its own, as deployed. */
export interface ServerProcess {
  url: string;
  pid: number;
  /** Resident set size now and at its peak (VmRSS, VmHWM), in bytes. */
  memory(): { rss: number; peak: number };
  /** Starts a new peak from the current RSS (Linux clear_refs), so the next peak measures what follows. */
  resetPeak(): void;
  /** Whether it is still running. */
  running(): boolean;
  exited: Promise<ProcessExit>;
  /**
   * SIGTERM (a clean stop, the default) or SIGKILL (a crash); resolves with how it exited. A frozen process is
   * continued after the signal, so that a stop always ends it.
   */
  stop(signal?: NodeJS.Signals): Promise<ProcessExit>;
  /** Freezes it (SIGSTOP): it runs nothing, its connections stay open, until `resume` (or `stop`). */
  freeze(): void;
  /** Lets a frozen process go on (SIGCONT); nothing when it is not frozen or has exited. */
  resume(): void;
  /** The lines it wrote to stdout (its log) so far. */
  output(): string[];
  /** The same, each parsed as JSON (a line that is not JSON kept as {text}). */
  lines(): Record<string, unknown>[];
}

function statusField(pid: number, field: string): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith(`${field}:`));
  return Number(/(\d+) kB/.exec(line ?? '')?.[1] ?? NaN) * 1024;
}

/**
 * CPU time a process has used so far, user and system, in seconds (Linux /proc; every thread counted). Fields
 * 14 and 15 of /proc/<pid>/stat, counted after the command name, which may itself contain spaces.
 */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticksPerSecond = 100; // USER_HZ, 100 on every Linux architecture Node runs on
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
}

/**
 * Runs an HTTP server (TypeScript through tsx unless other `node` options are given) as a child process on a
 * free port (given as `portVariable`, API_PORT by default) and resolves once its /livez answers. Every line it
 * prints on stdout (its log, JSON lines) is kept, and appended to `output` as well when given.
 */
export async function spawnServer(
  args: string[],
  env: Record<string, string>,
  options: { node?: string[]; portVariable?: string; output?: string[]; name?: string } = {},
): Promise<ServerProcess> {
  const port = await freePort();
  const name = options.name ?? args.join(' ');
  const child = spawn(process.execPath, [...(options.node ?? ['--import', 'tsx', '--conditions=source']), ...args], {
    env: {
      ...process.env,
      // Quiet, plain log lines unless `env` says otherwise, under either name (PRETTY is the reference gateway's).
      LOG_LEVEL: 'warn',
      ...('PRETTY' in env ? {} : { LOG_PRETTY: 'false' }),
      ...env,
      [options.portVariable ?? 'API_PORT']: String(port),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const output: string[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    output.push(line);
    options.output?.push(line);
  });
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<ProcessExit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  // Generous: on a loaded two-core machine, starting several TypeScript processes at once takes a while.
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode} before answering /livez`);
    const live = await fetch(`${url}/livez`).then(
      (response) => response.ok,
      () => false,
    );
    if (live) break;
    if (Date.now() > deadline) {
      // Nothing may be left running once the caller hears it failed: a server that starts late would outlive the
      // test and keep jest from exiting.
      child.kill('SIGKILL');
      await exited;
      throw new Error(`${name} did not answer /livez within 120 s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const pid = child.pid as number;
  return {
    url,
    pid,
    memory: () => ({ rss: statusField(pid, 'VmRSS'), peak: statusField(pid, 'VmHWM') }),
    resetPeak: () => writeFileSync(`/proc/${pid}/clear_refs`, '5'),
    running: () => child.exitCode === null && child.signalCode === null,
    exited,
    stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill(signal);
        child.kill('SIGCONT');
      }
      return exited;
    },
    freeze: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGSTOP');
    },
    resume: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGCONT');
    },
    output: () => [...output],
    lines: () =>
      output.map((text) => {
        try {
          return JSON.parse(text) as Record<string, unknown>;
        } catch {
          return { text };
        }
      }),
  };
}

/**
 * The other half of `waitUntil`: a state that must last. Runs `check` every `everyMs` for `ms` and once more at the
 * end, failing the first time it throws.
 */
export async function holdsFor(ms: number, check: () => Promise<void> | void, everyMs = 100): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    await check();
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  await check();
}

/**
 * The tests' one polling helper: asks `condition` every `everyMs` until it answers a value (anything but false,
 * undefined or null), and resolves with that value; after `timeoutMs` it fails, naming what it waited for and
 * the last error the condition threw (an error counts as "not yet": a server still starting refuses
 * connections).
 */
export async function waitUntil<T>(
  condition: () => Promise<T | false | undefined | null>,
  timeoutMs = 10_000,
  what: string | (() => string) = 'the condition',
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    const value = await condition().catch((error: unknown) => {
      lastError = error;
      return undefined;
    });
    if (value !== false && value !== undefined && value !== null) return value;
    if (Date.now() > deadline) {
      const waitedFor = typeof what === 'string' ? what : what();
      const last = lastError === undefined ? '' : ` (last error: ${String(lastError)})`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${waitedFor}${last}`);
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
