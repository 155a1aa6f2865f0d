// `make bench`: the chart's install-to-Ready time in the project's local Kubernetes (dev/cluster), measured when that
// cluster is up and this runs as root; otherwise it says why nothing was measured (the benchmarks never start a
// cluster of their own). One release of charts/frequency-gateway as the cluster suites install it (in-cluster devchain,
// Redis and IPFS on volumes) in a namespace of its own, from `helm install` to every pod Ready, then removed.
// Printed, and (when measured) written to docs/measurements/chart-install-to-ready.json.
import { writeBenchmarkResult } from '@frequency-gateway/devstack';
import {
  baseValues,
  KUBECTL,
  GatewayRelease,
  KubeApi,
  missingPrerequisites,
  prepareImages,
  restartsOf,
  run,
} from '../src/cluster/index.js';

const say = (line: string) => process.stdout.write(`${line}\n`);
/** Six api pods (two replicas each), three workers, the devchain, Redis and IPFS. */
const RELEASE_PODS = 12;

async function main(): Promise<void> {
  const missing = missingPrerequisites();
  const up = missing.length === 0 && (await run(KUBECTL, ['get', '--raw', '/readyz'])).code === 0;
  if (!up) {
    say(
      'bench install-to-Ready: not measured (the local cluster is not up or cannot be used here: ' +
        `${missing.length > 0 ? missing.join('; ') : 'run make cluster'})`,
    );
    return;
  }
  const image = await prepareImages();
  const kube = await KubeApi.connect();
  const release = new GatewayRelease(kube, `fg-e2e-bench-${Date.now().toString(36)}`, image);
  await release.createNamespace();
  try {
    const started = Date.now();
    const install = await release.install(baseValues(image, release.namespace));
    const pods = await release.allReady(300_000, RELEASE_PODS);
    const seconds = (Date.now() - started) / 1000;
    const restarts = pods.reduce((sum, pod) => sum + restartsOf(pod), 0);
    say(
      `bench install-to-Ready: ${pods.length} pods Ready ${seconds.toFixed(1)} s after helm install ` +
        `(helm install --wait returned after ${install.seconds.toFixed(1)} s); restarts ${restarts}`,
    );
    const written = writeBenchmarkResult({
      benchmark: 'chart-install-to-ready',
      title: 'Chart: helm install to every pod Ready in the local cluster',
      figures: [
        { name: 'helm install to every pod Ready', value: Number(seconds.toFixed(1)), unit: 's' },
        { name: 'helm install --wait returned after', value: Number(install.seconds.toFixed(1)), unit: 's' },
        { name: 'pods Ready', value: pods.length, unit: 'pods' },
        { name: 'restarts', value: restarts, unit: 'restarts' },
      ],
      notes: [
        'One release of charts/frequency-gateway as the cluster suites install it (in-cluster devchain, Redis and ' +
          "IPFS on volumes) in a namespace of its own, in the project's local one-node Kubernetes (dev/cluster).",
      ],
    });
    say(`written to ${written}`);
  } finally {
    await release.deleteNamespace();
    kube.close();
  }
}

await main();
