import type { Codec } from '@polkadot/types/types';
import { u8aToHex } from '@polkadot/util';
import { ethereumAccountId } from '@frequency-gateway/chain';
import type { AccountHex } from './context.js';

/**
 * The account of a MultiAddress as Frequency's EthereumCompatibleAccountIdLookup resolves it: `Id` as is,
 * `Address20` (an Ethereum address) as its Ethereum-style AccountId32 (the address then twelve 0xEE bytes);
 * any other variant does not resolve.
 */
export function accountOfAddress(address: Codec): AccountHex | undefined {
  const value = address as unknown as { type?: string; value?: Codec };
  if (value.type === 'Id' && value.value) return value.value.toHex() as AccountHex;
  if (value.type === 'Address20' && value.value)
    return u8aToHex(ethereumAccountId(value.value.toU8a(true))) as AccountHex;
  return undefined;
}

export const bigintOf = (value: Codec): bigint => (value as unknown as { toBigInt(): bigint }).toBigInt();

export const numberOf = (value: Codec): number => (value as unknown as { toNumber(): number }).toNumber();

/** The value inside a Some, or undefined for None. */
export function someOf<T = Codec>(option: Codec): T | undefined {
  const value = option as unknown as { isSome: boolean; unwrap(): T };
  return value.isSome ? value.unwrap() : undefined;
}

/**
 * An MSA id (u64) given by a caller. Ids the chain creates are sequential and far below 2^53, so an id beyond
 * JavaScript's safe integers can name no MSA: it is read as 2^53 − 1, which no MSA has either, instead of
 * failing (the runtime simply finds nothing for it).
 */
export function msaIdOf(value: Codec): number {
  const id = bigintOf(value);
  return id > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(id);
}
