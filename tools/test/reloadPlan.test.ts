import { fileURLToPath } from 'node:url';
import { COMPONENTS } from '../src/components.js';
import { componentsRunning, filesRunBy } from '../src/dev/reloadPlan.js';
import { SourceGraph } from '../src/dev/sourceGraph.js';
import { isWatchedSource } from '../src/dev/sourceWatch.js';
import { readWorkspaces } from '../src/workspaces.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const graph = new SourceGraph(root, readWorkspaces(root));
const runBy = filesRunBy(root, graph, COMPONENTS);
const restarted = (...files: string[]) => [...componentsRunning(runBy, files).keys()];

describe('make dev: which components a saved file restarts', () => {
  it('a route restarts its api only', () => {
    expect(restarted('services/content-publishing/src/api/assetRoutes.ts')).toEqual(['content-publishing-api']);
  });

  it("a worker's Lua script restarts that worker only (loaded by URL beside its module)", () => {
    expect(restarted('services/content-publishing/src/worker/batch/join.lua')).toEqual(['content-publishing-worker']);
  });

  it('a file both sides of a service import restarts its api and its worker, no other service', () => {
    expect(restarted('services/account/src/queues.ts')).toEqual(['account-api', 'account-worker']);
  });

  it('a shared library restarts every component that imports it, through other packages too', () => {
    expect(restarted('shared/storage/src/index.ts')).toEqual([
      'content-publishing-api',
      'content-publishing-worker',
      'content-watcher-worker',
    ]);
    expect(restarted('shared/platform/src/index.ts')).toEqual(COMPONENTS.map((c) => c.name));
  });

  it('names each component with the changed files it runs; a file nothing imports restarts nothing', () => {
    const affected = componentsRunning(runBy, [
      'services/content-watcher/src/api/component.ts',
      'services/content-watcher/src/not-imported.ts',
    ]);
    expect([...affected]).toEqual([['content-watcher-api', ['services/content-watcher/src/api/component.ts']]]);
  });

  it('watches sources, not tests, declarations or editor files', () => {
    expect(
      ['a/src/x.ts', 'a/src/x.lua', 'a/src/x.test.ts', 'a/src/x.d.ts', 'a/src/.#x.ts', 'a/src/x.ts~', 'a/src/4913'].map(
        isWatchedSource,
      ),
    ).toEqual([true, true, false, false, false, false, false]);
  });
});
