import type { Codec } from '@polkadot/types/types';
import type { AccountHex } from './context.js';

/** The account of a MultiAddress when it is the `Id` variant (the only one the runtime resolves). */
export function accountOfAddress(address: Codec): AccountHex | undefined {
  const value = address as unknown as { type?: string; value?: Codec };
  if (value.type === 'Id' && value.value) return value.value.toHex() as AccountHex;
  return undefined;
}

export const bigintOf = (value: Codec): bigint => (value as unknown as { toBigInt(): bigint }).toBigInt();

export const numberOf = (value: Codec): number => (value as unknown as { toNumber(): number }).toNumber();

/** The value inside a Some, or undefined for None. */
export function someOf<T = Codec>(option: Codec): T | undefined {
  const value = option as unknown as { isSome: boolean; unwrap(): T };
  return value.isSome ? value.unwrap() : undefined;
}
