// `make bench`: the developer's loop with `skaffold dev` on the project's local Kubernetes (dev/cluster): start to
// serving, and a saved source change to serving from the redeployed api, with where the time went. Measured when
// that cluster is up, skaffold is built (make skaffold) and this runs as root; otherwise it says why nothing was
// measured (the benchmarks never start a cluster or build skaffold of their own).
import { describeSaveToServing, measureSaveToServing, skaffoldDevPrerequisites } from '../src/cluster/saveToServing.js';

const say = (line: string) => process.stdout.write(`${line}\n`);
const why = await skaffoldDevPrerequisites();
if (why) say(`bench skaffold dev save-to-serving: not measured (${why})`);
else for (const line of describeSaveToServing(await measureSaveToServing(), 'bench skaffold dev: ')) say(line);
