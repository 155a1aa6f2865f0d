import { u8aToHex } from '@polkadot/util';

export type Key = `0x${string}`;

/** What dispatch code reads and writes: raw storage by hex key. */
export interface StateView {
  get(key: Key): Uint8Array | undefined;
  set(key: Key, value: Uint8Array | undefined): void;
  /** Keys under a prefix, in ascending order. */
  keys(prefix: Key): Key[];
}

interface Version {
  block: number;
  value: Uint8Array | undefined;
}

/**
 * The chain's storage across all blocks. Each key keeps the list of (block, value) changes, so the state at
 * any block is read by a binary search and memory grows with the number of changes, not of blocks.
 */
export class VersionedState {
  private readonly history = new Map<Key, Version[]>();
  private sortedKeys: Key[] | undefined;

  /** The value of `key` after block `block` was applied. */
  read(key: Key, block: number): Uint8Array | undefined {
    const versions = this.history.get(key);
    if (!versions) return undefined;
    let low = 0;
    let high = versions.length - 1;
    let found: Version | undefined;
    while (low <= high) {
      const middle = (low + high) >> 1;
      const version = versions[middle] as Version;
      if (version.block <= block) {
        found = version;
        low = middle + 1;
      } else high = middle - 1;
    }
    return found?.value;
  }

  /** Records the changes made by block `block`. */
  apply(block: number, changes: ReadonlyMap<Key, Uint8Array | undefined>): void {
    for (const [key, value] of changes) {
      let versions = this.history.get(key);
      if (!versions) {
        versions = [];
        this.history.set(key, versions);
        this.sortedKeys = undefined;
      }
      const last = versions[versions.length - 1];
      if (last?.block === block) last.value = value;
      else versions.push({ block, value });
    }
  }

  keys(prefix: Key, block: number): Key[] {
    this.sortedKeys ??= [...this.history.keys()].sort();
    return this.sortedKeys.filter((key) => key.startsWith(prefix) && this.read(key, block) !== undefined);
  }

  /** A read-only view at a block. */
  at(block: number): StateView {
    return {
      get: (key) => this.read(key, block),
      set: () => {
        throw new Error('state of a sealed block is read-only');
      },
      keys: (prefix) => this.keys(prefix, block),
    };
  }
}

/**
 * Changes on top of a view, in nested layers: `begin()` opens a transactional layer, `commit()` folds it
 * into the one below, `rollback()` drops it. Dispatch runs each extrinsic (and each batch item) in a layer.
 */
export class Overlay implements StateView {
  private readonly layers: Array<Map<Key, Uint8Array | undefined>> = [new Map()];

  constructor(private readonly base: StateView) {}

  get(key: Key): Uint8Array | undefined {
    for (let index = this.layers.length - 1; index >= 0; index--) {
      const layer = this.layers[index] as Map<Key, Uint8Array | undefined>;
      if (layer.has(key)) return layer.get(key);
    }
    return this.base.get(key);
  }

  set(key: Key, value: Uint8Array | undefined): void {
    (this.layers[this.layers.length - 1] as Map<Key, Uint8Array | undefined>).set(key, value);
  }

  keys(prefix: Key): Key[] {
    const all = new Set(this.base.keys(prefix));
    for (const layer of this.layers) for (const key of layer.keys()) if (key.startsWith(prefix)) all.add(key);
    return [...all].filter((key) => this.get(key) !== undefined).sort();
  }

  begin(): void {
    this.layers.push(new Map());
  }

  commit(): void {
    if (this.layers.length < 2) throw new Error('no transactional layer to commit');
    const top = this.layers.pop() as Map<Key, Uint8Array | undefined>;
    const below = this.layers[this.layers.length - 1] as Map<Key, Uint8Array | undefined>;
    for (const [key, value] of top) below.set(key, value);
  }

  rollback(): void {
    if (this.layers.length < 2) throw new Error('no transactional layer to roll back');
    this.layers.pop();
  }

  /** Runs `work` in a layer: committed when it returns, rolled back when it throws. */
  transactional<T>(work: () => T): T {
    this.begin();
    try {
      const result = work();
      this.commit();
      return result;
    } catch (error) {
      this.rollback();
      throw error;
    }
  }

  /** Every change, once all layers are committed. */
  changes(): ReadonlyMap<Key, Uint8Array | undefined> {
    if (this.layers.length !== 1) throw new Error('transactional layers are still open');
    return this.layers[0] as Map<Key, Uint8Array | undefined>;
  }
}

export const toKey = (bytes: Uint8Array): Key => u8aToHex(bytes) as Key;
