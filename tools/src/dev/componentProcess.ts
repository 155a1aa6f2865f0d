// The processes of `make dev`: a component started as `main.ts <role>`, a standby (tools/src/dev/standby.ts) that
// becomes one on a reload, and the readiness wait both use. Every output line goes through `print`, which
// prefixes it with the component's name.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { ComponentEntry } from '../components.js';

export type Print = (name: string, line: string) => void;

export interface Running {
  component: ComponentEntry;
  port: number;
  child: ChildProcess;
  exited: Promise<number | null>;
  /** Set when a reload stops it on purpose (its exit is then not news). */
  replaced?: boolean;
}

const TSX = ['--import', 'tsx', '--conditions=source'];
const STANDBY = fileURLToPath(new URL('./standby.ts', import.meta.url));

/** Prints the child's output as `name` says (read when each line arrives: a standby is renamed on assignment). */
function relay(child: ChildProcess, name: () => string, print: Print): Promise<number | null> {
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream! }).on('line', (line) => print(name(), line));
  }
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

export function launch(
  component: ComponentEntry,
  root: string,
  port: number,
  env: NodeJS.ProcessEnv,
  print: Print,
): Running {
  const main = join(root, 'services', component.service, 'src', 'main.ts');
  const child = spawn(process.execPath, [...TSX, main, component.role], {
    cwd: root,
    env: { ...env, [component.portVariable]: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { component, port, child, exited: relay(child, () => component.name, print) };
}

export async function waitUntilReady(running: Running, deadline: number, everyMs = 250): Promise<boolean> {
  while (Date.now() < deadline && running.child.exitCode === null && running.child.signalCode === null) {
    const ready = await fetch(`http://127.0.0.1:${running.port}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) return true;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  return false;
}

/** Stops a component for good: SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
export async function stopProcess(running: Running, graceMs: number): Promise<void> {
  running.replaced = true;
  running.child.kill('SIGTERM');
  const timer = setTimeout(() => running.child.kill('SIGKILL'), graceMs);
  await running.exited;
  clearTimeout(timer);
}

type StandbyAnswer = { type: 'warm' } | { type: 'loaded' } | { type: 'failed'; error: string } | { type: 'exit' };

/** A standby process: warms up on third-party packages, then becomes the component it is assigned. */
export class Standby {
  private name = 'standby';
  private readonly child: ChildProcess;
  private readonly exited: Promise<number | null>;
  /** Resolves once the packages are loaded (or the process is gone). */
  readonly warm: Promise<void>;

  constructor(root: string, env: NodeJS.ProcessEnv, packages: readonly string[], print: Print) {
    this.child = spawn(process.execPath, [...TSX, STANDBY], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    this.exited = relay(this.child, () => this.name, print);
    this.warm = packages.length === 0 ? Promise.resolve() : this.ask({ type: 'packages', packages }).then(() => {});
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Takes the component's environment and loads its code; true when it loaded, else the error it met. */
  async load(component: ComponentEntry, env: Record<string, string>, main: string, load: string[]) {
    await this.warm;
    this.name = component.name;
    const answer = await this.ask({ type: 'assign', env, main, role: component.role, load });
    if (answer.type === 'loaded') return { loaded: true as const };
    this.child.kill('SIGKILL');
    return {
      loaded: false as const,
      error: answer.type === 'failed' ? answer.error : `the standby process exited (${this.child.exitCode})`,
    };
  }

  /** Runs the loaded component: from here it is that component's process. */
  start(component: ComponentEntry, port: number): Running {
    // A standby gone since it loaded cannot hear this; the wait for readiness then sees it exited.
    this.child.send({ type: 'start' }, () => undefined);
    return { component, port, child: this.child, exited: this.exited };
  }

  discard(): Promise<number | null> {
    this.child.kill('SIGKILL');
    return this.exited;
  }

  /** Sends a message and resolves with the standby's answer, or `exit` if it is gone first. */
  private ask(message: object): Promise<StandbyAnswer> {
    if (!this.alive) return Promise.resolve({ type: 'exit' });
    return new Promise((resolve) => {
      const answered = (answer: StandbyAnswer) => {
        this.child.off('message', answered);
        this.child.off('exit', gone);
        resolve(answer);
      };
      const gone = () => answered({ type: 'exit' });
      this.child.on('message', answered);
      this.child.once('exit', gone);
      this.child.send(message, (error) => error && gone());
    });
  }
}
