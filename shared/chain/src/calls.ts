import type { ApiPromise } from '@polkadot/api';
import type { Call } from '@polkadot/types/interfaces';
import type { Codec } from '@polkadot/types/types';

/** The calls the services put in capacity transactions, built with Frequency's typings. */
export const messageCalls = (api: ApiPromise) => ({
  /** A message whose payload is a file in IPFS: its CID and length in bytes. */
  addIpfsMessage: (schemaId: number, cid: string, payloadLength: number): Call =>
    api.tx.messages.addIpfsMessage(schemaId, cid, payloadLength).method as unknown as Call,
  /** A message stored on chain, from the provider itself or on behalf of a user who delegated to it. */
  addOnchainMessage: (onBehalfOf: string | bigint | undefined, schemaId: number, payload: string): Call =>
    api.tx.messages.addOnchainMessage(onBehalfOf ?? null, schemaId, payload).method as unknown as Call,
});

/** A user's proof as a MultiSignature value: `{Sr25519: '0x…'}`, `{Ecdsa: '0x…'}`... */
type Proof = { algo: 'Sr25519' | 'Ed25519' | 'Ecdsa'; encodedValue: string };
const multiSignature = (proof: Proof) => ({ [proof.algo]: proof.encodedValue }) as { Sr25519: string };

/** The user-signed account calls a provider submits, with the user's key, proof and payload. */
export type AccountCall =
  | 'msa.createSponsoredAccountWithDelegation'
  | 'msa.grantDelegation'
  | 'msa.addRecoveryCommitment'
  | 'handles.claimHandle'
  | 'handles.changeHandle'
  | 'statefulStorage.applyItemActionsWithSignatureV2'
  | 'statefulStorage.upsertPageWithSignatureV2';

/**
 * Builds the user-signed account calls (the user's key, their proof and the payload they signed, in the
 * chain's own types), as the provider puts them in a capacity transaction.
 */
export const accountCalls = (api: ApiPromise) => {
  const { msa, handles, statefulStorage } = api.tx;
  const builders: Record<AccountCall, (key: string, proof: Proof, payload: Codec) => Call> = {
    'msa.createSponsoredAccountWithDelegation': (key, proof, payload) =>
      msa.createSponsoredAccountWithDelegation(key, multiSignature(proof), payload as never).method as unknown as Call,
    'msa.grantDelegation': (key, proof, payload) =>
      msa.grantDelegation(key, multiSignature(proof), payload as never).method as unknown as Call,
    'msa.addRecoveryCommitment': (key, proof, payload) =>
      msa.addRecoveryCommitment(key, multiSignature(proof), payload as never).method as unknown as Call,
    'handles.claimHandle': (key, proof, payload) =>
      handles.claimHandle(key, multiSignature(proof), payload as never).method as unknown as Call,
    'handles.changeHandle': (key, proof, payload) =>
      handles.changeHandle(key, multiSignature(proof), payload as never).method as unknown as Call,
    'statefulStorage.applyItemActionsWithSignatureV2': (key, proof, payload) =>
      statefulStorage.applyItemActionsWithSignatureV2(key, multiSignature(proof), payload as never)
        .method as unknown as Call,
    'statefulStorage.upsertPageWithSignatureV2': (key, proof, payload) =>
      statefulStorage.upsertPageWithSignatureV2(key, multiSignature(proof), payload as never).method as unknown as Call,
  };
  return {
    build: (call: AccountCall, key: string, proof: Proof, payload: Codec): Call => builders[call](key, proof, payload),
    /** msa.addPublicKeyToMsa: the MSA owner's and the new key's proofs over the same AddKeyData payload. */
    addPublicKeyToMsa: (owner: string, ownerProof: Proof, newKeyProof: Proof, payload: Codec): Call =>
      msa.addPublicKeyToMsa(owner, multiSignature(ownerProof), multiSignature(newKeyProof), payload as never)
        .method as unknown as Call,
    /** A call from its SCALE hex (as a job carries it), checked to decode in this runtime. */
    decode: (hex: string): Call => api.createType('Call', hex) as unknown as Call,
  };
};
