import { options as frequencyOptions } from '@frequency-chain/api-augment';
import { ApiPromise, WsProvider } from '@polkadot/api';
import type { SubmittableExtrinsic } from '@polkadot/api/types';
import type { KeyringPair } from '@polkadot/keyring/types';
import type { ISubmittableResult } from '@polkadot/types/types';
import type { PalletMsaAddProvider } from '@polkadot/types/lookup';
import { u8aToHex, u8aWrapBytes } from '@polkadot/util';
import { devKeyring, startDevchain, type Devchain, type DevchainOptions } from '../../src/index.js';

export interface Connected {
  devchain: Devchain;
  api: ApiPromise;
  alice: KeyringPair;
  bob: KeyringPair;
  charlie: KeyringPair;
  /** A dev account by name (Alice … Ferdie). */
  pair(name: string): KeyringPair;
  close(): Promise<void>;
}

/** A devchain and a real @polkadot/api client connected to it over WebSocket. */
export async function connect(options: DevchainOptions = {}): Promise<Connected> {
  const internalErrors: unknown[] = [];
  const devchain = await startDevchain({ ...options, onInternalError: (error) => internalErrors.push(error) });
  const api = await ApiPromise.create({
    ...frequencyOptions,
    provider: new WsProvider(devchain.url),
    noInitWarn: true,
    throwOnConnect: true,
  });
  const keyring = await devKeyring(42);
  const pair = (name: string) => keyring.getPairs().find((p) => p.meta.name === name) as KeyringPair;
  return {
    devchain,
    api,
    alice: pair('Alice'),
    bob: pair('Bob'),
    charlie: pair('Charlie'),
    pair,
    close: async () => {
      // The client's close handshake first: a server shutdown that cuts it short makes polkadot-js log a 1006.
      const disconnected = api.isConnected ? new Promise((resolve) => api.once('disconnected', resolve)) : undefined;
      await api.disconnect();
      await disconnected;
      await devchain.close();
      // A devchain bug must fail the suite even when the client only saw a failed call.
      if (internalErrors.length > 0)
        throw new Error(`devchain internal errors: ${internalErrors.map(String).join('; ')}`);
    },
  };
}

export interface Outcome {
  statuses: string[];
  result: ISubmittableResult;
}

/** signAndSend until the extrinsic is finalized (or fails); resolves with every status seen. */
export function submit(
  tx: SubmittableExtrinsic<'promise'>,
  signer: KeyringPair,
  options: { nonce?: number } = {},
): Promise<Outcome> {
  const statuses: string[] = [];
  return new Promise((resolve, reject) => {
    tx.signAndSend(signer, options, (result) => {
      statuses.push(result.status.type);
      if (result.status.isFinalized || result.status.isInvalid || result.status.isDropped)
        resolve({ statuses, result });
    }).catch(reject);
  });
}

/** "section.Name" of every event of an outcome. */
export const eventNames = (outcome: Outcome) =>
  outcome.result.events.map(({ event }) => `${event.section}.${event.method}`);

/** "section.Error" of a failed dispatch, or the DispatchError text when it is not a module error. */
export function moduleError(api: ApiPromise, outcome: Outcome): string | undefined {
  const error = outcome.result.dispatchError;
  if (!error?.isModule) return error?.toString();
  const meta = api.registry.findMetaError(error.asModule);
  return `${meta.section}.${meta.name}`;
}

/** The number of the block that will execute the next extrinsic. */
export const nextBlock = async (api: ApiPromise) => (await api.rpc.chain.getHeader()).number.toNumber() + 1;

/** A user's sr25519 signature over a payload, `<Bytes>`-wrapped as wallets sign. */
export const signPayload = (signer: KeyringPair, payload: { toU8a(): Uint8Array }) => ({
  Sr25519: u8aToHex(signer.sign(u8aWrapBytes(payload.toU8a()))),
});

/** Signs a user up through Alice's provider (MSA 1) with a delegation for `intents`; resolves with the MSA id. */
export async function sponsor(api: ApiPromise, provider: KeyringPair, user: KeyringPair, intents: number[] = [1, 2]) {
  const payload = api.createType('PalletMsaAddProvider', {
    authorizedMsaId: 1,
    intentIds: intents,
    expiration: (await nextBlock(api)) + 100,
  }) as unknown as PalletMsaAddProvider;
  const outcome = await submit(
    api.tx.msa.createSponsoredAccountWithDelegation(user.address, signPayload(user, payload), payload),
    provider,
  );
  if (!outcome.result.status.isFinalized || outcome.result.dispatchError) throw new Error('sponsored sign-up failed');
  return (await api.query.msa.publicKeyToMsaId(user.address)).unwrap().toNumber();
}
