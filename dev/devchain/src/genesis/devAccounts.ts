import { Keyring } from '@polkadot/keyring';
import type { KeyringPair } from '@polkadot/keyring/types';
import { u8aToHex } from '@polkadot/util';
import { cryptoWaitReady, encodeAddress } from '@polkadot/util-crypto';
import type { AccountHex } from '../runtime/context.js';

export const DEV_NAMES = ['Alice', 'Bob', 'Charlie', 'Dave', 'Eve', 'Ferdie'] as const;
export type DevName = (typeof DEV_NAMES)[number];

/** The sr25519 development keys (//Alice … //Ferdie and their //stash keys) the genesis endows. */
export async function devKeyring(ss58Format: number): Promise<Keyring> {
  await cryptoWaitReady();
  const keyring = new Keyring({ type: 'sr25519', ss58Format });
  for (const name of DEV_NAMES) {
    keyring.addFromUri(`//${name}`, { name });
    keyring.addFromUri(`//${name}//stash`, { name: `${name} stash` });
  }
  return keyring;
}

export const accountHex = (pair: KeyringPair): AccountHex => u8aToHex(pair.publicKey) as AccountHex;

export const ss58 = (account: AccountHex, format: number) => encodeAddress(account, format);
