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

  /** How many values it holds, over all keys and blocks: what its memory grows with. */
  get size(): number {
    let count = 0;
    for (const versions of this.history.values()) count += versions.length;
    return count;
  }

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

  /**
   * Forgets every change made after block `block` (a reorganisation: the blocks above it were retracted, and their
   * replacements are applied next). Only the unfinalized tail is ever truncated, so no branch is kept.
   */
  truncate(block: number): void {
    for (const [key, versions] of this.history) {
      while (versions.length > 0 && (versions[versions.length - 1] as Version).block > block) versions.pop();
      if (versions.length === 0) {
        this.history.delete(key);
        this.sortedKeys = undefined;
      }
    }
  }

  /**
   * Forgets what only blocks before `block` could read (pruning): each key keeps its value as of `block` and every
   * later change, and a key deleted by then is gone. The state at `block` and after reads as before.
   */
  discardBefore(block: number): void {
    for (const [key, versions] of this.history) {
      let base = -1;
      for (let index = 0; index < versions.length && (versions[index] as Version).block <= block; index++) base = index;
      if (base > 0) versions.splice(0, base);
      if (base >= 0 && versions.length === 1 && (versions[0] as Version).value === undefined) {
        this.history.delete(key);
        this.sortedKeys = undefined;
      }
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

interface Layer {
  changes: Map<Key, Uint8Array | undefined>;
  /** Event records deposited in this layer: they share its fate, as events are storage on chain. */
  events: Uint8Array[];
}

/**
 * Changes on top of a view, in nested layers: `begin()` opens a transactional layer, `commit()` folds it
 * into the one below, `rollback()` drops it (storage changes and events alike). Dispatch runs each
 * extrinsic, and each item of a non-atomic batch, in a layer.
 */
export class Overlay implements StateView {
  private readonly layers: Layer[] = [{ changes: new Map(), events: [] }];

  constructor(private readonly base: StateView) {}

  private get top(): Layer {
    return this.layers[this.layers.length - 1] as Layer;
  }

  get(key: Key): Uint8Array | undefined {
    for (let index = this.layers.length - 1; index >= 0; index--) {
      const { changes } = this.layers[index] as Layer;
      if (changes.has(key)) return changes.get(key);
    }
    return this.base.get(key);
  }

  set(key: Key, value: Uint8Array | undefined): void {
    this.top.changes.set(key, value);
  }

  keys(prefix: Key): Key[] {
    const all = new Set(this.base.keys(prefix));
    for (const { changes } of this.layers) for (const key of changes.keys()) if (key.startsWith(prefix)) all.add(key);
    return [...all].filter((key) => this.get(key) !== undefined).sort();
  }

  deposit(record: Uint8Array): void {
    this.top.events.push(record);
  }

  begin(): void {
    this.layers.push({ changes: new Map(), events: [] });
  }

  commit(): void {
    if (this.layers.length < 2) throw new Error('no transactional layer to commit');
    const top = this.layers.pop() as Layer;
    for (const [key, value] of top.changes) this.top.changes.set(key, value);
    this.top.events.push(...top.events);
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

  private settled(): Layer {
    if (this.layers.length !== 1) throw new Error('transactional layers are still open');
    return this.layers[0] as Layer;
  }

  /** Every change, once all layers are committed. */
  changes(): ReadonlyMap<Key, Uint8Array | undefined> {
    return this.settled().changes;
  }

  /** Every event record kept, in deposit order, once all layers are committed. */
  events(): readonly Uint8Array[] {
    return this.settled().events;
  }
}

export const toKey = (bytes: Uint8Array): Key => u8aToHex(bytes) as Key;
