import { checkPrerequisites, clusterUp, prepareImages, type ClusterImage } from './prepare.js';
import { KubeApi } from './kubeApi.js';
import { GatewayRelease, nodeAddress, RELEASE } from './release.js';
import { WebhookReceiver } from './receiver.js';

/** What a cluster suite starts from: its release (not installed yet) in a namespace of its own, with a receiver. */
export interface SuiteRelease {
  image: ClusterImage;
  kube: KubeApi;
  release: GatewayRelease;
  receiver: WebhookReceiver;
}

/**
 * The cluster up (started when it is not), the gateway image built and loaded, a namespace `<prefix>-<base36 time>`
 * enforcing the restricted Pod Security Standard, and the webhook receiver in it. Fails naming what is missing.
 */
export async function prepareSuiteRelease(namespacePrefix: string): Promise<SuiteRelease> {
  checkPrerequisites();
  await clusterUp();
  const image = await prepareImages();
  const kube = await KubeApi.connect();
  const release = new GatewayRelease(kube, `${namespacePrefix}-${Date.now().toString(36)}`, image);
  await release.createNamespace();
  const receiver = await WebhookReceiver.start(release.namespace, image, await nodeAddress(kube));
  return { image, kube, release, receiver };
}

/**
 * Undoes prepareSuiteRelease: the release uninstalled when it is still installed, then its namespace deleted (and
 * with it the receiver and the servers' claims).
 */
export async function removeSuiteRelease(release: GatewayRelease | undefined, installed: boolean): Promise<void> {
  if (!release) return;
  if (installed) await release.helm(['uninstall', RELEASE, '--wait']).catch(() => undefined);
  await release.deleteNamespace();
}
