import { expandMetadata, unwrapStorageType, type Metadata, type TypeRegistry } from '@polkadot/types';
import type { StorageEntry } from '@polkadot/types/primitive/types';
import type { Codec } from '@polkadot/types/types';
import { compactStripLength, stringCamelCase, u8aConcat } from '@polkadot/util';
import { toKey, type Key, type StateView } from './state.js';

/**
 * Typed access to runtime storage by pallet and item name, with the keys and value encodings of the
 * metadata: what a pallet writes here is what `api.query.<pallet>.<item>(...)` reads.
 */
export class Storage {
  private readonly query: Record<string, Record<string, StorageEntry>>;

  constructor(
    readonly registry: TypeRegistry,
    metadata: Metadata,
  ) {
    this.query = expandMetadata(registry, metadata).query as unknown as Record<string, Record<string, StorageEntry>>;
  }

  entry(pallet: string, item: string): StorageEntry {
    const entry = this.query[stringCamelCase(pallet)]?.[stringCamelCase(item)];
    if (!entry) throw new Error(`no storage item ${pallet}.${item}`);
    return entry;
  }

  key(pallet: string, item: string, ...keys: unknown[]): Key {
    const entry = this.entry(pallet, item);
    const raw = keys.length === 0 ? entry() : entry(...keys);
    return toKey(compactStripLength(raw)[1]);
  }

  /** The prefix shared by every key of a map, or by those that start with the given leading keys. */
  prefix(pallet: string, item: string, ...leadingKeys: unknown[]): Key {
    const entry = this.entry(pallet, item);
    return toKey(leadingKeys.length === 0 ? entry.keyPrefix() : entry.keyPrefix(...leadingKeys));
  }

  /** Decoded values of every entry under a prefix. */
  values<T extends Codec = Codec>(state: StateView, pallet: string, item: string, ...leadingKeys: unknown[]): T[] {
    const entry = this.entry(pallet, item);
    const type = unwrapStorageType(this.registry, entry.meta.type, false);
    return state
      .keys(this.prefix(pallet, item, ...leadingKeys))
      .map((key) => this.registry.createType(type, state.get(key)) as unknown as T);
  }

  /** The decoded value, or the item's default when absent (Option items decode to None). */
  get<T extends Codec = Codec>(state: StateView, pallet: string, item: string, ...keys: unknown[]): T {
    const entry = this.entry(pallet, item);
    const bytes = state.get(this.key(pallet, item, ...keys));
    const type = unwrapStorageType(this.registry, entry.meta.type, entry.meta.modifier.isOptional);
    // An OptionQuery item stores the bare value; the Some flag exists only in the decoded view.
    const stored = bytes !== undefined && entry.meta.modifier.isOptional ? u8aConcat([1], bytes) : bytes;
    if (stored !== undefined) return this.registry.createType(type, stored) as unknown as T;
    const fallback = entry.meta.modifier.isOptional ? undefined : entry.meta.fallback.toU8a(true);
    return this.registry.createType(type, fallback) as unknown as T;
  }

  /**
   * Writes a value (anything the item's type accepts); `undefined` removes the key. Give `Bytes` contents as
   * 0x-hex or codecs: polkadot-js reads a Uint8Array as already SCALE-encoded (length prefix included).
   */
  set(state: StateView, pallet: string, item: string, keys: unknown[], value: unknown): void {
    const entry = this.entry(pallet, item);
    const key = this.key(pallet, item, ...keys);
    if (value === undefined) return state.set(key, undefined);
    const type = unwrapStorageType(this.registry, entry.meta.type, false);
    state.set(key, this.registry.createType(type, value).toU8a());
  }

  has(state: StateView, pallet: string, item: string, ...keys: unknown[]): boolean {
    return state.get(this.key(pallet, item, ...keys)) !== undefined;
  }
}
