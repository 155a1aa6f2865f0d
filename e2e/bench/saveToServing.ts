// `make bench`: the developer's loop with `skaffold dev` on the project's local Kubernetes (dev/cluster): start to
// serving, and saved edits to serving: source edits through file sync (median and worst of five in a row), a
// package manifest edit through a rebuilt image, with where the time went. Measured when
// that cluster is up, skaffold is built (make skaffold) and this runs as root; otherwise it says why nothing was
// measured (the benchmarks never start a cluster or build skaffold of their own). Printed, and (when measured)
// written to docs/measurements/skaffold-save-to-serving.json.
import { type BenchmarkFigure, writeBenchmarkResult } from '@frequency-gateway/devstack';
import {
  describeSaveToServing,
  editFigures,
  measureSaveToServing,
  skaffoldDevPrerequisites,
  type SyncedEdit,
} from '../src/cluster/saveToServing.js';

const say = (line: string) => process.stdout.write(`${line}\n`);
const why = await skaffoldDevPrerequisites();
if (why) say(`bench skaffold dev save-to-serving: not measured (${why})`);
else {
  const run = await measureSaveToServing();
  for (const line of describeSaveToServing(run, 'bench skaffold dev: ')) say(line);
  const seconds = (ms: number) => Number((ms / 1000).toFixed(1));
  const synced = (what: string, edits: SyncedEdit[]): BenchmarkFigure[] => {
    const { medianMs, worstMs } = editFigures(edits);
    return [
      { name: `save to serving, ${what}: median`, value: seconds(medianMs), unit: 's' },
      { name: `save to serving, ${what}: worst`, value: seconds(worstMs), unit: 's' },
    ];
  };
  const phases: [string, number | undefined][] = [
    ['save to rebuild started (watcher)', run.rebuild.phasesMs.watcher],
    ['image build and load', run.rebuild.phasesMs.build],
    ['helm upgrade and rollout', run.rebuild.phasesMs.rollout],
    ['rolled out to served through the forward', run.rebuild.phasesMs.forward],
  ];
  const figures: BenchmarkFigure[] = [
    { name: 'start to serving', value: seconds(run.startToServingMs), unit: 's' },
    ...synced('a service source edit (file sync)', run.serviceEdits),
    ...synced('a shared source edit (file sync)', run.sharedEdits),
    {
      name: 'save to serving, a package manifest edit (rebuild)',
      value: seconds(run.rebuild.saveToServingMs),
      unit: 's',
    },
    ...phases.flatMap(([name, ms]) =>
      ms === undefined ? [] : [{ name: `manifest edit phase: ${name}`, value: seconds(ms), unit: 's' }],
    ),
  ];
  const written = writeBenchmarkResult({
    benchmark: 'skaffold-save-to-serving',
    title: 'skaffold dev: start to serving, and saved edits to serving (file sync, rebuild)',
    figures,
    notes: [
      "`dev/cluster/skaffold dev` in the project's local one-node Kubernetes, on a copy of the working tree, with the development image (the Dockerfile's `dev` stage).",
    ],
  });
  say(`written to ${written}`);
}
