import type { ApiPromise } from '@polkadot/api';
import type { Call } from '@polkadot/types/interfaces';

/** The calls the services put in capacity transactions, built with Frequency's typings. */
export const messageCalls = (api: ApiPromise) => ({
  /** A message whose payload is a file in IPFS: its CID and length in bytes. */
  addIpfsMessage: (schemaId: number, cid: string, payloadLength: number): Call =>
    api.tx.messages.addIpfsMessage(schemaId, cid, payloadLength).method as unknown as Call,
  /** A message stored on chain, from the provider itself or on behalf of a user who delegated to it. */
  addOnchainMessage: (onBehalfOf: string | bigint | undefined, schemaId: number, payload: string): Call =>
    api.tx.messages.addOnchainMessage(onBehalfOf ?? null, schemaId, payload).method as unknown as Call,
});
