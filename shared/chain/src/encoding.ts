import type { ApiPromise } from '@polkadot/api';
import type { Call } from '@polkadot/types/interfaces';
import type { Codec } from '@polkadot/types/types';
import { hexToString, hexToU8a, isHex, u8aToHex } from '@polkadot/util';
import { decodeAddress, encodeAddress } from '@polkadot/util-crypto';

// The chain client's types and encodings as the services use them. Only shared/chain depends on the client
// libraries (@polkadot/*, @frequency-chain/*), so that their versions and quirks are met in one package.

/** A client of a Frequency node, with Frequency's types and RPCs (see openChain). */
export type ChainApi = ApiPromise;

/** A call of the runtime (pallet, method, arguments), as a transaction carries it. */
export type ChainCall = Call;

/** A value in the chain's SCALE types: a payload a user signs, say. */
export type ChainValue = Codec;

/** 0x-hex of bytes. */
export const hexOf = (bytes: Uint8Array): `0x${string}` => u8aToHex(bytes);

/** The bytes of 0x-hex (throws on anything that is not hex). */
export const bytesOfHex = (hex: string): Uint8Array => hexToU8a(hex);

/** The UTF-8 text that 0x-hex bytes hold, or undefined when the value is not hex. */
export const textOfHex = (value: unknown): string | undefined =>
  typeof value === 'string' && isHex(value) ? hexToString(value) : undefined;

/** The AccountId32 (0x-hex) of an SS58 address or of 32-byte hex; throws on anything else. */
export const accountIdOf = (address: string): `0x${string}` => u8aToHex(decodeAddress(address));

/** The public key bytes of an SS58 address or of hex; throws on anything else. */
export const publicKeyOf = (address: string): Uint8Array => decodeAddress(address);

/** The SS58 address of an account under a chain's prefix (`api.registry.chainSS58`). */
export const ss58Of = (account: Uint8Array | string, prefix: number | undefined): string =>
  encodeAddress(account, prefix);
