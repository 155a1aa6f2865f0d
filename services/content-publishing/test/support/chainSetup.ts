import { loadProviderKey, SignedPayloads } from '@frequency-gateway/chain';
import type { ApiPromise } from '@polkadot/api';
import type { SubmittableExtrinsic } from '@polkadot/api/types';
import { Keyring } from '@polkadot/keyring';
import { u8aToHex } from '@polkadot/util';

/** The first intent and schema created after genesis get this id. */
export const FIRST_NEW_ID = 16001;

/** An Avro model for on-chain test content. */
export const AVRO_MODEL = JSON.stringify({ type: 'record', name: 'Note', fields: [{ name: 'n', type: 'int' }] });

/** Signs a call as //Alice (the provider and sudo key of the devchain) and resolves once it is finalized. */
export async function asAlice(call: SubmittableExtrinsic<'promise'>): Promise<void> {
  const alice = await loadProviderKey('//Alice');
  await new Promise<void>((resolve, reject) => {
    call
      .signAndSend(alice.address, { signer: alice.signer }, (result) => {
        if (result.dispatchError) {
          const { dispatchError } = result;
          const reason = dispatchError.isModule
            ? call.registry.findMetaError(dispatchError.asModule).name
            : dispatchError.type;
          reject(new Error(`${call.method.section}.${call.method.method} failed: ${reason}`));
        } else if (result.status.isFinalized) resolve();
      })
      .catch(reject);
  });
}

/** Registers an on-chain intent with one Avro schema (ids FIRST_NEW_ID on a fresh devchain). */
export async function createOnChainIntent(api: ApiPromise, name: string, schemaId = FIRST_NEW_ID): Promise<void> {
  const alice = await loadProviderKey('//Alice');
  const sudo = api.tx.sudo.sudo;
  await asAlice(sudo(api.tx.schemas.createIntentViaGovernance(alice.address, 'OnChain', [], name)));
  await asAlice(sudo(api.tx.schemas.createSchemaViaGovernanceV3(alice.address, schemaId, AVRO_MODEL, 'AvroBinary')));
}

/** The user of a dev seed (//Dave) grants provider 1 these intents, with their own signature. */
export async function grantIntents(api: ApiPromise, seed: string, intentIds: number[]): Promise<void> {
  const user = new Keyring({ type: 'sr25519' }).addFromUri(seed);
  const best = (await api.rpc.chain.getHeader()).number.toNumber();
  const grant = new SignedPayloads(api).addProvider({ authorizedMsaId: 1, intentIds, expiration: best + 50 });
  const proof = { Sr25519: u8aToHex(user.sign(SignedPayloads.signingBytes(grant).wrapped)) };
  await asAlice(api.tx.msa.grantDelegation(user.address, proof, grant as never));
}
