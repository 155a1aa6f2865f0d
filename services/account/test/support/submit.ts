import { loadProviderKey } from '@frequency-gateway/chain';
import type { SubmittableExtrinsic } from '@polkadot/api/types';

/** Signs and submits as //Alice; resolves with the "section.Method" events once the extrinsic is in a block. */
export async function submitAsAlice(call: SubmittableExtrinsic<'promise'>): Promise<string[]> {
  const alice = await loadProviderKey('//Alice');
  let unsubscribe: (() => void) | undefined;
  const events = await new Promise<string[]>((resolve, reject) => {
    call
      .signAndSend(alice.address, { signer: alice.signer }, (result) => {
        if (result.status.isInBlock || result.status.isFinalized)
          resolve(result.events.map(({ event }) => `${event.section}.${event.method}`));
        else if (result.isError) reject(new Error(`submission ended as ${result.status.type}`));
      })
      .then((stop) => (unsubscribe = stop), reject);
  });
  unsubscribe?.();
  return events;
}
