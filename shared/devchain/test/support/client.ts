import { options as frequencyOptions } from '@frequency-chain/api-augment';
import { ApiPromise, WsProvider } from '@polkadot/api';
import type { SubmittableExtrinsic } from '@polkadot/api/types';
import type { KeyringPair } from '@polkadot/keyring/types';
import type { ISubmittableResult } from '@polkadot/types/types';
import { devKeyring, startDevchain, type Devchain, type DevchainOptions } from '../../src/index.js';

export interface Connected {
  devchain: Devchain;
  api: ApiPromise;
  alice: KeyringPair;
  bob: KeyringPair;
  charlie: KeyringPair;
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
    close: async () => {
      await api.disconnect();
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
