// `skaffold dev` (through dev/cluster/skaffold) as a child process whose output is read as it comes: the port-forwards
// it reports, and when each build and deploy of the dev loop starts and ends.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface SkaffoldEvent {
  /** performance.now() when the line arrived. */
  at: number;
  line: string;
}

export interface SkaffoldDev {
  /** Local URL of each forwarded Service, by Service name. */
  forwards: Map<string, string>;
  events: SkaffoldEvent[];
  /** The first event at or after `since` whose line matches. */
  eventAfter(since: number, pattern: RegExp): SkaffoldEvent | undefined;
  output(): string;
  exitCode(): number | null;
  /** Ctrl-C, as a developer stops it: skaffold uninstalls the release, then exits. */
  stop(): Promise<void>;
}

const FORWARD = /Port forwarding service\/(\S+) in namespace \S+, remote port \S+ -> (http:\/\/127\.0\.0\.1:\d+)/;

export function startSkaffoldDev(cwd: string, args: string[], env: NodeJS.ProcessEnv): SkaffoldDev {
  const child: ChildProcess = spawn(`${cwd}/dev/cluster/skaffold`, ['dev', ...args], {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const forwards = new Map<string, string>();
  const events: SkaffoldEvent[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    createInterface({ input: stream }).on('line', (line) => {
      events.push({ at: performance.now(), line });
      const forward = FORWARD.exec(line);
      if (forward) forwards.set(forward[1]!, forward[2]!);
    });
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    forwards,
    events,
    eventAfter: (since, pattern) => events.find((event) => event.at >= since && pattern.test(event.line)),
    output: () => events.map((event) => event.line).join('\n'),
    exitCode: () => child.exitCode,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGINT');
      const stopped = await Promise.race([
        exited.then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 120_000).unref()),
      ]);
      // Its whole process group (skaffold's helm, kubectl and build children) if it did not finish cleaning up.
      if (!stopped && child.pid) process.kill(-child.pid, 'SIGKILL');
      await exited;
    },
  };
}
