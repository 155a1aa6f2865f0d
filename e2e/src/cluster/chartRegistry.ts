import { helmBinary, kubectl, must, REPOSITORY } from '../commands.js';
import { restrictedPod, suiteLabels } from './manifests.js';
import { PortForward } from './portForward.js';

const NAME = 'registry';

/** The registry's Pod and Service: the distribution registry (dev/images/registry), storage in an emptyDir. */
function manifests(): object {
  const labels = suiteLabels(NAME);
  const container = {
    name: 'registry',
    image: 'registry:3',
    ports: [{ name: 'http', containerPort: 5000 }],
    readinessProbe: { httpGet: { path: '/v2/', port: 'http' }, periodSeconds: 1 },
    resources: { requests: { cpu: '10m', memory: '32Mi' }, limits: { memory: '256Mi' } },
    volumeMounts: [{ name: 'storage', mountPath: '/var/lib/registry' }],
  };
  return {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      restrictedPod(NAME, labels, container, [{ name: 'storage', emptyDir: {} }]),
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: NAME, labels },
        spec: { selector: labels, ports: [{ name: 'http', port: 5000, targetPort: 'http' }] },
      },
    ],
  };
}

/** The packaged chart as pushed: what `helm install` takes. */
export interface PublishedChart {
  /** oci://127.0.0.1:<port>/charts/frequency-gateway */
  reference: string;
  version: string;
  /** The digest the registry gave the chart. */
  digest: string;
}

/**
 * An OCI registry (the CNCF distribution registry) running in a namespace of the local cluster, reached from the host
 * through a port-forward on loopback. `publish` packages the chart (`make chart`'s tools/package-chart) and pushes it.
 */
export class ChartRegistry {
  private constructor(
    private readonly namespace: string,
    private readonly forward: PortForward,
  ) {}

  /** Builds and loads the registry image, starts it in the namespace, and forwards a loopback port to it. */
  static async start(namespace: string): Promise<ChartRegistry> {
    await must(`${REPOSITORY}dev/images/registry`, [], { timeoutMs: 900_000 });
    await kubectl(['-n', namespace, 'apply', '-f', '-'], { input: JSON.stringify(manifests()) });
    await kubectl(['-n', namespace, 'wait', '--for=condition=Ready', `pod/${NAME}`, '--timeout=120s']);
    return new ChartRegistry(namespace, await PortForward.start(namespace, NAME, 5000));
  }

  /** host:port of the registry on loopback. */
  get host(): string {
    return new URL(this.forward.url).host;
  }

  /** Packages this checkout's chart with `make chart`'s tools/package-chart and pushes it. */
  async publish(): Promise<PublishedChart> {
    const packaged = (await must(`${REPOSITORY}tools/package-chart`, [], { timeoutMs: 180_000 })).trim();
    return this.push(`${REPOSITORY}${packaged.split('\n').pop()!}`);
  }

  /** Pushes a packaged chart (frequency-gateway-<version>.tgz) to oci://<registry>/charts. */
  async push(archive: string): Promise<PublishedChart> {
    const helm = helmBinary();
    if (!helm) throw new Error('helm is missing: run make tools');
    const version = /frequency-gateway-([^/]+)\.tgz$/.exec(archive)?.[1];
    if (!version) throw new Error(`not a packaged chart of frequency-gateway: ${archive}`);
    const pushed = await must(helm, ['push', archive, `oci://${this.host}/charts`, '--plain-http']);
    const digest = /Digest: (sha256:[0-9a-f]{64})/.exec(pushed)?.[1];
    if (!digest) throw new Error(`helm push printed no digest: ${pushed}`);
    return { reference: `oci://${this.host}/charts/frequency-gateway`, version, digest };
  }

  /** Ends the port-forward and deletes the registry's objects. */
  async stop(): Promise<void> {
    this.forward.stop();
    await kubectl([
      '-n',
      this.namespace,
      'delete',
      'pod,service',
      '-l',
      `app.kubernetes.io/name=${NAME}`,
      '--wait=false',
    ]);
  }
}
