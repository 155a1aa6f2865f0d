import { options as frequencyOptions } from '@frequency-chain/api-augment';
import { ApiPromise, Keyring, WsProvider } from '@polkadot/api';
import type { SubmittableExtrinsic } from '@polkadot/api/types';
import type { KeyringPair } from '@polkadot/keyring/types';

/** The provider the services run as in e2e: //Alice's MSA, named "alice", with Capacity staked. */
export const E2E_PROVIDER = { seed: '//Alice', name: 'alice', stake: 2_000_000_000_000_000n } as const;

function send(tx: SubmittableExtrinsic<'promise'>, signer: KeyringPair): Promise<void> {
  return new Promise((resolve, reject) => {
    tx.signAndSend(signer, ({ status, dispatchError }) => {
      if (dispatchError)
        reject(new Error(`${tx.method.section}.${tx.method.method} failed: ${dispatchError.toString()}`));
      else if (status.isFinalized) resolve();
    }).catch(reject);
  });
}

/**
 * Makes //Alice a registered, staked provider when the chain does not have her as one yet (a fresh node
 * container); a devchain starts that way, so there it changes nothing. Resolves with her MSA id.
 */
export async function provisionProvider(chainUrl: string): Promise<number> {
  const api = await ApiPromise.create({ ...frequencyOptions, provider: new WsProvider(chainUrl), noInitWarn: true });
  try {
    const alice = new Keyring({ type: 'sr25519' }).addFromUri(E2E_PROVIDER.seed);
    const msaOf = async () => (await api.query.msa.publicKeyToMsaId(alice.address)).unwrapOr(undefined)?.toNumber();
    if ((await msaOf()) === undefined) await send(api.tx.msa.create(), alice);
    const msaId = (await msaOf()) as number;
    if ((await api.query.msa.providerToRegistryEntryV2(msaId)).isNone) {
      const register = api.tx.msa.createProviderViaGovernanceV2(alice.address, {
        defaultName: E2E_PROVIDER.name,
        localizedNames: [],
        defaultLogo250100PngCid: '',
        localizedLogo250100PngCids: [],
      });
      await send(api.tx.sudo.sudo(register), alice);
    }
    if ((await api.query.capacity.capacityLedger(msaId)).isNone)
      await send(api.tx.capacity.stake(msaId, E2E_PROVIDER.stake), alice);
    return msaId;
  } finally {
    await api.disconnect();
  }
}
