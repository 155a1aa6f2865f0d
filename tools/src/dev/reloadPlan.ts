// Which components a saved file restarts: those whose process runs it. A component runs its service's main.ts and
// what that imports, but not the other role's side (main.ts imports both src/api/component.ts and
// src/worker/component.ts; a process starts one), so a route restarts only the api and a worker's Lua script only
// the worker, while a file both sides import (queues.ts, anything in shared/) restarts both.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { SourceGraph } from './sourceGraph.js';

export interface ComponentName {
  /** e.g. content-publishing-api */
  name: string;
  /** Folder under services/. */
  service: string;
  /** api or worker: the argument of main.ts, and the folder of that side's component.ts. */
  role: string;
}

export const mainOf = (component: ComponentName) => `services/${component.service}/src/main.ts`;

/** The files each component's process runs, by component name. */
export function filesRunBy(
  root: string,
  graph: SourceGraph,
  components: readonly ComponentName[],
): Map<string, Set<string>> {
  const sideOf = (service: string, role: string) => `services/${service}/src/${role}/component.ts`;
  return new Map(
    components.map((component) => {
      const otherSides = components
        .filter((other) => other.service === component.service && other.role !== component.role)
        .map((other) => sideOf(other.service, other.role))
        .filter((file) => existsSync(join(root, file)));
      return [component.name, graph.reach([mainOf(component)], new Set(otherSides))];
    }),
  );
}

/** The components that run one of `changed`, each with the changed files it runs, in the components' order. */
export function componentsRunning(
  runBy: ReadonlyMap<string, ReadonlySet<string>>,
  changed: readonly string[],
): Map<string, string[]> {
  const affected = new Map<string, string[]>();
  for (const [name, files] of runBy) {
    const runs = changed.filter((file) => files.has(file));
    if (runs.length > 0) affected.set(name, runs);
  }
  return affected;
}
