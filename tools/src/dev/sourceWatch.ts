// Watches the gateway's sources (services/*/src, shared/*/src) for saved TypeScript and Lua files, and reports
// them in batches, with the time of the batch's first change: a batch is handed over once no file has changed for `quietMs`, so an editor's several writes
// of one save, a formatter's rewrite, or a branch switch restart each component once.
import { existsSync, readdirSync, statSync, watch, type FSWatcher } from 'node:fs';
import { join, posix } from 'node:path';

/** The watched folders of the repository at `root`, relative to it. */
export function sourceFolders(root: string): string[] {
  return ['services', 'shared'].flatMap((top) =>
    existsSync(join(root, top))
      ? readdirSync(join(root, top))
          .map((name) => `${top}/${name}/src`)
          .filter((folder) => existsSync(join(root, folder)))
      : [],
  );
}

/** A source the gateway runs: TypeScript (not tests or declarations) or Lua; no editor's swap or lock files. */
export function isWatchedSource(file: string): boolean {
  const name = posix.basename(file);
  return /\.(ts|lua)$/.test(name) && !/\.(test|d)\.ts$/.test(name) && !name.startsWith('.');
}

/**
 * Every folder is watched on its own (inotify on the folder sees a file replaced by a rename, as editors and
 * `sed -i` save; Node 20's recursive watch on Linux follows the old file and misses it); a new folder is watched
 * from when it appears.
 */
export function watchSources(
  root: string,
  onBatch: (files: string[], since: number) => void,
  quietMs = 150,
): { close: () => void } {
  const batch = new Set<string>();
  let since = 0;
  let timer: NodeJS.Timeout | undefined;
  const watchers = new Map<string, FSWatcher>();
  const changed = (file: string) => {
    if (batch.size === 0) since = Date.now();
    batch.add(file);
    clearTimeout(timer);
    timer = setTimeout(() => {
      const files = [...batch].sort();
      batch.clear();
      onBatch(files, since);
    }, quietMs);
  };
  const unfollow = (folder: string) => {
    for (const [path, watcher] of watchers)
      if (path === folder || path.startsWith(`${folder}/`)) {
        watcher.close();
        watchers.delete(path);
      }
  };
  const follow = (folder: string) => {
    if (watchers.has(folder)) return;
    const watcher = watch(join(root, folder), (_event, name) => {
      if (!name) return;
      const path = posix.join(folder, name);
      if (isWatchedSource(path)) changed(path);
      else if (isFolder(join(root, path))) follow(path);
      else unfollow(path);
    });
    watcher.on('error', () => unfollow(folder));
    watchers.set(folder, watcher);
    for (const entry of readdirSync(join(root, folder), { withFileTypes: true }))
      if (entry.isDirectory()) follow(posix.join(folder, entry.name));
  };
  for (const folder of sourceFolders(root)) follow(folder);
  return {
    close: () => {
      clearTimeout(timer);
      for (const watcher of watchers.values()) watcher.close();
    },
  };
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
