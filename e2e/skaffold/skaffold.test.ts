// `skaffold dev` against the local cluster, as a developer runs it (dev/cluster/skaffold dev at the repository root): it
// must build the image, install the chart with the dev profile, forward the three apis to loopback, and after a
// saved source change serve the change from a redeployed api (src/cluster/saveToServing.ts runs the loop). Prints
// the time from save to serving, with where it went.
// Needs: the local cluster (make cluster, root) and skaffold (tools/install-skaffold); fails naming what is missing.
import { describeSaveToServing, measureSaveToServing, SKAFFOLD_APIS } from '../src/cluster/saveToServing.js';

describe('skaffold dev on the local cluster', () => {
  it(
    'deploys the dev profile, forwards the apis, and serves a saved change from the redeployed api',
    async () => {
      const run = await measureSaveToServing();
      for (const api of SKAFFOLD_APIS) process.stdout.write(`skaffold dev: ${api} ${run.forwards.get(api)}\n`);
      for (const line of describeSaveToServing(run, 'bench skaffold dev: ')) process.stdout.write(`${line}\n`);

      // Every api was forwarded to loopback; the first document had the summary and not yet the change.
      for (const api of SKAFFOLD_APIS) expect(run.forwards.get(api)).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(run.documentBefore).toEqual({ summary: true, marker: false });
      // The change is served by a new rollout of the image skaffold rebuilt; the other apis still answer.
      expect(run.documentAfterHasMarker).toBe(true);
      expect(run.imageAfter).not.toBe(run.imageBefore);
      expect(run.otherApisAfter).toEqual([200, 200]);
    },
    45 * 60_000,
  );
});
