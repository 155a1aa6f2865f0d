// `make bench`: the developer's loop with `skaffold dev` on the project's local Kubernetes (dev/cluster): start to
// serving, and a saved source change to serving from the redeployed api, with where the time went. Measured when
// that cluster is up, skaffold is built (make skaffold) and this runs as root; otherwise it says why nothing was
// measured (the benchmarks never start a cluster or build skaffold of their own). Printed, and (when measured)
// written to docs/measurements/skaffold-save-to-serving.json.
import { type BenchmarkFigure, writeBenchmarkResult } from '@frequency-gateway/devstack';
import { describeSaveToServing, measureSaveToServing, skaffoldDevPrerequisites } from '../src/cluster/saveToServing.js';

const say = (line: string) => process.stdout.write(`${line}\n`);
const why = await skaffoldDevPrerequisites();
if (why) say(`bench skaffold dev save-to-serving: not measured (${why})`);
else {
  const run = await measureSaveToServing();
  for (const line of describeSaveToServing(run, 'bench skaffold dev: ')) say(line);
  const seconds = (ms: number) => Number((ms / 1000).toFixed(1));
  const phases: [string, number | undefined][] = [
    ['save to rebuild started (watcher)', run.phasesMs.watcher],
    ['image build and load', run.phasesMs.build],
    ['helm upgrade and rollout', run.phasesMs.rollout],
    ['rolled out to served through the forward', run.phasesMs.forward],
  ];
  const figures: BenchmarkFigure[] = [
    { name: 'start to serving', value: seconds(run.startToServingMs), unit: 's' },
    { name: 'save to serving', value: seconds(run.saveToServingMs), unit: 's' },
    ...phases.flatMap(([name, ms]) =>
      ms === undefined ? [] : [{ name: `phase: ${name}`, value: seconds(ms), unit: 's' }],
    ),
  ];
  const written = writeBenchmarkResult({
    benchmark: 'skaffold-save-to-serving',
    title: 'skaffold dev: start to serving, and a saved change to serving',
    figures,
    notes: ["`dev/cluster/skaffold dev` in the project's local one-node Kubernetes, on a copy of the working tree."],
  });
  say(`written to ${written}`);
}
