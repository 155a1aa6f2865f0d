import type { SubmittableExtrinsic } from '@polkadot/api/types';
import { loadProviderKey, type ChainConnection, type ProviderKey } from '../../src/index.js';

/** A devchain with a connected client and a private Redis server, for the chain package's tests. */
export { startChainStack as startTestStack, type ChainStack as TestStack } from '@frequency-gateway/devstack';

/** Signs and sends a transaction, resolving when it is finalized. */
export function sendFinalized(
  tx: SubmittableExtrinsic<'promise'>,
  key: ProviderKey,
  nonce?: number,
): Promise<string[]> {
  return new Promise((resolve, reject) => {
    tx.signAndSend(key.address, { signer: key.signer, ...(nonce === undefined ? {} : { nonce }) }, (result) => {
      if (result.status.isFinalized) resolve(result.events.map(({ event }) => `${event.section}.${event.method}`));
      if (result.status.isInvalid || result.status.isDropped) reject(new Error(result.status.type));
    }).catch(reject);
  });
}

/** Makes `count` blocks (instant sealing seals one per transaction) with remarks from //Bob. */
export async function tick(chain: ChainConnection, count: number): Promise<void> {
  const bob = await loadProviderKey('//Bob');
  for (let i = 0; i < count; i++) await sendFinalized(chain.api.tx.system.remark(`tick ${i}`), bob);
}
