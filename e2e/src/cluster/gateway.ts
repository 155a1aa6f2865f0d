import { GatewayClient } from '../clients/gatewayClient.js';
import { PortForward } from './portForward.js';
import { FULLNAME, RELEASE, type GatewayRelease } from './release.js';

export * from '../clients/gatewayClient.js';
export { eachLimited } from '@frequency-gateway/devstack';

/**
 * The gateway of a release as its clients see it: each api and the IPFS gateway through their NodePort Services on
 * the node's address, and the devchain through a port-forward on loopback.
 */
export async function connectToRelease(release: GatewayRelease): Promise<GatewayClient> {
  const url = (name: string) => release.nodePortUrl(name);
  const [account, contentPublishing, contentWatcher, ipfsGateway] = await Promise.all([
    url(`${FULLNAME}-account-api`),
    url(`${FULLNAME}-content-publishing-api`),
    url(`${FULLNAME}-content-watcher-api`),
    url(`${RELEASE}-ipfs-gateway`),
  ]);
  const devchain = await PortForward.start(release.namespace, `${FULLNAME}-devchain`, 9944);
  try {
    return await GatewayClient.connect(
      { account, contentPublishing, contentWatcher, ipfsGateway, chainUrl: devchain.url.replace(/^http/, 'ws') },
      () => devchain.stop(),
    );
  } catch (error) {
    devchain.stop();
    throw error;
  }
}
