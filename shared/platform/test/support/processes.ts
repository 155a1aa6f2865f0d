import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface RunningScript {
  child: ChildProcess;
  /** Every stdout line parsed as JSON (non-JSON lines are kept as {text}). */
  lines: Record<string, unknown>[];
  waitForLine(
    predicate: (line: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Runs a TypeScript fixture as its own Node process, the way the components run in `make dev`. */
export function runScript(relativeToTest: string, env: NodeJS.ProcessEnv): RunningScript {
  const file = fileURLToPath(new URL(`../../${relativeToTest}`, import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=source', file], {
    env: { ...process.env, LOG_PRETTY: 'false', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: Record<string, unknown>[] = [];
  const waiters: Array<{
    predicate: (line: Record<string, unknown>) => boolean;
    resolve: (line: Record<string, unknown>) => void;
  }> = [];
  createInterface({ input: child.stdout! }).on('line', (text) => {
    let line: Record<string, unknown>;
    try {
      line = JSON.parse(text) as Record<string, unknown>;
    } catch {
      line = { text };
    }
    lines.push(line);
    for (const waiter of [...waiters]) {
      if (waiter.predicate(line)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    lines,
    exited,
    // A fixture started through tsx on a loaded two-core machine can take tens of seconds to print its first line
    // (20 s ran out in full runs); a bound, not a wait: the line usually comes in a second or two.
    waitForLine: (predicate, timeoutMs = 60_000) => {
      const seen = lines.find(predicate);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const fail = (why: string) => reject(new Error(`${why}; last lines: ${JSON.stringify(lines.slice(-5))}`));
        const timer = setTimeout(() => fail(`no matching line within ${timeoutMs} ms`), timeoutMs);
        void exited.then(({ code, signal }) => (clearTimeout(timer), fail(`process exited (${code ?? signal}) first`)));
        waiters.push({ predicate, resolve: (line) => (clearTimeout(timer), resolve(line)) });
      });
    },
  };
}
