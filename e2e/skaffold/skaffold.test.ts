// `skaffold dev` against the local cluster, as a developer runs it (dev/cluster/skaffold dev at the repository root): it
// must build the development image, install the chart with the dev profile and forward the three apis to loopback;
// a saved source edit, of a service or of a shared package, must be served through file sync (no image build, the
// same Pods), and a package manifest edit through a rebuilt image (src/cluster/saveToServing.ts runs the loop).
// Prints the times from save to serving, with where they went.
// Needs: the local cluster (make cluster, root) and skaffold (tools/install-skaffold); fails naming what is missing.
import {
  describeSaveToServing,
  EDITS_IN_A_ROW,
  measureSaveToServing,
  SKAFFOLD_APIS,
} from '../src/cluster/saveToServing.js';

describe('skaffold dev on the local cluster', () => {
  it(
    'deploys the dev profile, forwards the apis, serves saved source edits through file sync and a manifest edit through a rebuilt image',
    async () => {
      const run = await measureSaveToServing();
      for (const api of SKAFFOLD_APIS) process.stdout.write(`skaffold dev: ${api} ${run.forwards.get(api)}\n`);
      for (const line of describeSaveToServing(run, 'bench skaffold dev: ')) process.stdout.write(`${line}\n`);

      // Every api was forwarded to loopback; the first document had the texts and no marker yet.
      for (const api of SKAFFOLD_APIS) expect(run.forwards.get(api)).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(run.documentBefore).toEqual({ texts: true, marker: false });
      // The development image's components load their packages from its vendor bundles.
      expect(run.vendorBundle).toBe(true);
      // The source edits were served by the same Pods of the same image (their containers never restarted: the
      // watcher inside restarted the process), and skaffold built nothing for them.
      expect(run.serviceEdits).toHaveLength(EDITS_IN_A_ROW);
      expect(run.sharedEdits).toHaveLength(EDITS_IN_A_ROW);
      expect(run.deployed.afterSync).toEqual(run.deployed.before);
      expect(run.buildsDuringSync).toBe(0);
      // The manifest edit was served by a rebuilt image.
      expect(run.buildsForManifest).toBeGreaterThan(0);
      expect(run.deployed.afterRebuild.image).not.toBe(run.deployed.before.image);
      expect(run.otherApisAfter).toEqual([200, 200]);
    },
    45 * 60_000,
  );
});
