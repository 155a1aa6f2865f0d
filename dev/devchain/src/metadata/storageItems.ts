import { stringPascalCase } from '@polkadot/util';
import type { AugmentStorage } from './apiAugment.js';
import type { PalletFact, RuntimeFacts } from './facts.js';

export interface StorageItemSpec {
  name: string;
  modifier: 'Optional' | 'Default';
  hashers: string[];
  keys: string[];
  value: string;
  default?: unknown;
}

/**
 * The storage items of one pallet. Frequency pallets come from the facts file (Rust names, hashers and query
 * kinds) and must agree with api-augment's listing; other pallets come from the listing, with the facts
 * file's labelled hasher guesses.
 */
export function storageItemsOf(
  facts: RuntimeFacts,
  pallet: PalletFact,
  listing: readonly AugmentStorage[],
  guesses: string[],
): StorageItemSpec[] {
  const recorded = facts.storage[pallet.name]?.items;
  if (recorded) {
    const recordedNames = new Set(recorded.map((item) => item.apiName));
    const unrecorded = listing.filter((item) => !recordedNames.has(item.name)).map((item) => item.name);
    if (unrecorded.length > 0)
      throw new Error(`${pallet.name}: storage in api-augment but not in the facts: ${unrecorded.join(', ')}`);
    return recorded.map((item) => {
      const listed = listing.find((entry) => entry.name === item.apiName);
      const value = item.modifier === 'Optional' ? `Option<${item.value}>` : item.value;
      if (
        !listed ||
        listed.value !== value ||
        listed.keys.join(',') !== item.keys.join(',') ||
        item.hashers.length !== item.keys.length
      ) {
        throw new Error(`${pallet.name}.${item.name}: the facts and api-augment disagree`);
      }
      return {
        name: item.name,
        modifier: item.modifier,
        hashers: item.hashers,
        keys: item.keys,
        value: item.value,
        default: item.default,
      };
    });
  }
  return listing.map((entry) => {
    const name = stringPascalCase(entry.name);
    const optional = entry.value.startsWith('Option<');
    const hashers = entry.keys.length === 0 ? [] : facts.guessed.storageHashers.items[`${pallet.name}.${name}`];
    if (!hashers || hashers.length !== entry.keys.length)
      throw new Error(`${pallet.name}.${name}: no hasher recorded or guessed`);
    if (hashers.length > 0) guesses.push(`storage ${pallet.name}.${name}: hashers ${hashers.join(', ')}`);
    return {
      name,
      modifier: optional ? 'Optional' : 'Default',
      hashers,
      keys: entry.keys,
      value: optional ? entry.value.slice('Option<'.length, -1) : entry.value,
    };
  });
}
