// `make dev` reloads: a saved source file restarts the components whose process runs it (tools/src/dev/reloadPlan.ts),
// and nothing else: the devchain, Redis, the IPFS store and the other components keep running with their state.
//
// A restart takes a standby process that has already loaded the third-party packages, has it load the component's
// code while the old process still answers, and only then stops the old process and starts the new one on the
// freed port. Code that does not load (a syntax error, an import of a name that is not exported, a module that
// throws) is reported and the old process keeps running; the next good save restarts it. A component that loads
// but then exits while starting is down until the next save.
import { join, posix } from 'node:path';
import type { ComponentEntry } from '../components.js';
import { readWorkspaces } from '../workspaces.js';
import { Standby, stopProcess, waitUntilReady, type Print, type Running } from './componentProcess.js';
import { componentsRunning, filesRunBy, mainOf } from './reloadPlan.js';
import { SourceGraph } from './sourceGraph.js';
import { watchSources } from './sourceWatch.js';

/** Warm standbys kept: an api and its worker restart together when a file both run is saved. */
const SPARES = 2;
/** How long a replaced component may take to stop before it is killed. */
const STOP_GRACE_MS = 10_000;

export interface ReloadOptions {
  /** The repository whose services/ and shared/ the components run. */
  root: string;
  /** The running components, replaced in place on a restart. */
  all: Running[];
  /** The environment every component shares (its port aside). */
  env: NodeJS.ProcessEnv;
  print: Print;
  say: (line: string) => void;
  /** Called with every process a reload starts (the runner reports unexpected exits). */
  adopt: (running: Running) => void;
}

/** "a.ts", "a.ts, b.ts", "a.ts, b.ts, c.ts and 2 more" */
const listed = (files: readonly string[]) =>
  files.length <= 3 ? files.join(', ') : `${files.slice(0, 3).join(', ')} and ${files.length - 3} more`;

export class Reloads {
  private readonly graph: SourceGraph;
  private runBy: Map<string, Set<string>>;
  private readonly spares: Standby[] = [];
  private readonly inFlight = new Set<Standby>();
  /** Components that exited while starting after a reload: any next save retries them. */
  private readonly down = new Set<string>();
  private queued: { files: string[]; since: number }[] = [];
  private round?: Promise<void>;
  private watcher?: { close: () => void };
  private closed = false;

  constructor(private readonly options: ReloadOptions) {
    this.graph = new SourceGraph(options.root, readWorkspaces(options.root));
    this.runBy = filesRunBy(options.root, this.graph, this.components);
  }

  /** Starts watching and warms the standbys. */
  start(): void {
    this.watcher = watchSources(this.options.root, (files, since) => this.saved(files, since));
    this.refill();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.watcher?.close();
    // A reload under way sees `closed` after its next step; a process it already started is in `all`, which the
    // runner stops.
    await Promise.all([...this.spares, ...this.inFlight].map((standby) => standby.discard()));
  }

  private get components(): ComponentEntry[] {
    return this.options.all.map((running) => running.component);
  }

  private saved(files: string[], since: number): void {
    this.queued.push({ files, since });
    this.round ??= this.drain();
  }

  private async drain(): Promise<void> {
    while (this.queued.length > 0 && !this.closed) {
      const batches = this.queued.splice(0);
      await this.reloadFor([...new Set(batches.flatMap((batch) => batch.files))], batches[0]!.since);
    }
    this.round = undefined;
    this.refill();
  }

  private async reloadFor(changed: string[], since: number): Promise<void> {
    const before = componentsRunning(this.runBy, changed);
    this.runBy = filesRunBy(this.options.root, this.graph, this.components);
    const affected = new Map([...before, ...componentsRunning(this.runBy, changed)]);
    for (const name of this.down) if (!affected.has(name)) affected.set(name, changed);
    await Promise.all(
      this.options.all.map((running, index) => {
        const files = affected.get(running.component.name);
        return files ? this.reload(index, files, since) : undefined;
      }),
    );
  }

  private async reload(index: number, files: string[], since: number): Promise<void> {
    const { root, all, print, say } = this.options;
    const old = all[index]!;
    const { component, port } = old;
    const standby = this.takeSpare() ?? this.standby([]);
    this.inFlight.add(standby);
    try {
      const main = join(root, mainOf(component));
      const service = posix.dirname(posix.dirname(mainOf(component)));
      const load = this.graph
        .importsOf(mainOf(component))
        .filter((file) => file.startsWith(`${service}/`))
        .map((file) => join(root, file));
      const loaded = await standby.load(component, { [component.portVariable]: String(port) }, main, load);
      if (this.closed) return;
      if (!loaded.loaded) {
        const running = old.child.exitCode === null && old.child.signalCode === null;
        const state = running ? 'keeps running its last good code' : 'stays down';
        say(`${component.name} ${state}: ${listed(files)} does not load:`);
        for (const line of loaded.error.split('\n').slice(0, 12)) print(component.name, line);
        return;
      }
      await stopProcess(old, STOP_GRACE_MS);
      if (this.closed) return;
      const fresh = standby.start(component, port);
      all[index] = fresh;
      this.options.adopt(fresh);
      if (await waitUntilReady(fresh, Date.now() + 60_000, 50)) {
        this.down.delete(component.name);
        const seconds = ((Date.now() - since) / 1000).toFixed(1);
        say(`restarted ${component.name} (${listed(files)} changed) in ${seconds} s`);
      } else if (fresh.child.exitCode !== null || fresh.child.signalCode !== null) {
        this.down.add(component.name);
        say(`${component.name} exited while starting (${listed(files)} changed); the next save restarts it`);
      } else {
        say(`${component.name} restarted (${listed(files)} changed) but is not ready after 60 s`);
      }
    } catch (error) {
      say(`${component.name}: the reload failed: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      this.inFlight.delete(standby);
    }
  }

  private takeSpare(): Standby | undefined {
    for (let spare = this.spares.shift(); spare; spare = this.spares.shift()) if (spare.alive) return spare;
    return undefined;
  }

  private standby(packages: string[]): Standby {
    const { root, env, print } = this.options;
    return new Standby(root, env, packages, print);
  }

  /** Tops the warm standbys up, with the third-party packages every component imports. */
  private refill(): void {
    if (this.closed || this.spares.length >= SPARES) return;
    const packages = [...this.graph.externals(new Set([...this.runBy.values()].flatMap((files) => [...files])))];
    while (this.spares.length < SPARES) this.spares.push(this.standby(packages));
  }
}
