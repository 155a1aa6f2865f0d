import type { AccountHex } from '../runtime/context.js';
import { INVALID } from '../runtime/errors.js';
import type { CheckedExtrinsic, Hex } from './extrinsic.js';

/** The statuses of author_submitAndWatchExtrinsic, as a Substrate node sends them. */
export type TransactionStatus =
  | 'future'
  | 'ready'
  | 'dropped'
  | 'invalid'
  | { inBlock: Hex }
  | { finalized: Hex }
  | { usurped: Hex }
  | { retracted: Hex };

type Watcher = (status: TransactionStatus) => void;

/**
 * Pending extrinsics by sender and nonce. An extrinsic whose nonce is ahead of its sender's account waits
 * ("future") until the gap closes; each sender's ready extrinsics go into blocks in nonce order.
 */
export class TransactionPool {
  /**
   * At most this many future extrinsics wait; beyond it the one that has waited longest is dropped (a node's
   * pool keeps 512 by default).
   */
  constructor(private readonly futureLimit = 512) {}

  private readonly bySender = new Map<AccountHex, Map<number, CheckedExtrinsic>>();
  private readonly byHash = new Map<Hex, CheckedExtrinsic>();
  private readonly watchers = new Map<Hex, Set<Watcher>>();
  /** Extrinsics already reported ready (so a promotion is reported once). */
  private readonly promoted = new Set<Hex>();

  get size(): number {
    return this.byHash.size;
  }

  has(hash: Hex): boolean {
    return this.byHash.has(hash);
  }

  pending(): CheckedExtrinsic[] {
    return [...this.byHash.values()];
  }

  /**
   * Adds a checked extrinsic. `ahead` when its nonce is ahead of the sender's account: it is still ready when
   * the pool holds a ready extrinsic for the nonce before it (a chain from the account nonce), else future.
   * Returns whether it entered the ready queue. `resubmitted` (an extrinsic of a retracted block back in the pool):
   * its watchers, already told `retracted`, hear nothing until its next block.
   */
  add(extrinsic: CheckedExtrinsic, ahead: boolean, resubmitted = false): boolean {
    if (this.byHash.has(extrinsic.hash)) throw INVALID.alreadyImported();
    const sender = extrinsic.signer as AccountHex;
    let nonces = this.bySender.get(sender);
    if (!nonces) this.bySender.set(sender, (nonces = new Map()));
    const predecessor = nonces.get(extrinsic.nonce - 1);
    const future = ahead && !(predecessor && this.promoted.has(predecessor.hash));
    const existing = nonces.get(extrinsic.nonce);
    if (existing) {
      // A replacement must pay a higher tip, as a node's priority rule demands.
      if (extrinsic.tip <= existing.tip) throw INVALID.tooLowPriority(Number(existing.tip), Number(extrinsic.tip));
      this.remove(existing.hash, { usurped: extrinsic.hash });
    }
    nonces.set(extrinsic.nonce, extrinsic);
    this.byHash.set(extrinsic.hash, extrinsic);
    if (!future) this.promoted.add(extrinsic.hash);
    if (!resubmitted) this.notify(extrinsic.hash, future ? 'future' : 'ready');
    if (future) this.enforceFutureLimit();
    // A ready extrinsic may close the gap in front of waiting ones: they become ready now.
    if (!future)
      for (let next = extrinsic.nonce + 1; nonces.has(next); next++) this.promote(nonces.get(next) as CheckedExtrinsic);
    return !future;
  }

  /** The extrinsics to try in the next block: per sender, consecutive nonces from its account nonce. */
  ready(accountNonce: (sender: AccountHex) => number): CheckedExtrinsic[] {
    const ready: CheckedExtrinsic[] = [];
    for (const [sender, nonces] of this.bySender) {
      for (let nonce = accountNonce(sender); nonces.has(nonce); nonce++)
        ready.push(nonces.get(nonce) as CheckedExtrinsic);
    }
    return ready;
  }

  watch(hash: Hex, watcher: Watcher): () => void {
    let set = this.watchers.get(hash);
    if (!set) this.watchers.set(hash, (set = new Set()));
    set.add(watcher);
    return () => set.delete(watcher);
  }

  notify(hash: Hex, status: TransactionStatus): void {
    for (const watcher of this.watchers.get(hash) ?? []) watcher(status);
    const final =
      status === 'dropped' ||
      status === 'invalid' ||
      (typeof status === 'object' && ('finalized' in status || 'usurped' in status));
    if (final) this.watchers.delete(hash);
  }

  /** Takes an extrinsic out of the pool, telling its watchers why (when a final status is given). */
  remove(hash: Hex, status?: TransactionStatus): void {
    const extrinsic = this.byHash.get(hash);
    if (!extrinsic) return;
    this.byHash.delete(hash);
    this.promoted.delete(hash);
    const nonces = this.bySender.get(extrinsic.signer as AccountHex);
    nonces?.delete(extrinsic.nonce);
    if (nonces?.size === 0) this.bySender.delete(extrinsic.signer as AccountHex);
    if (status) this.notify(hash, status);
  }

  /** After a block: drops what became stale or expired, and promotes futures whose gap closed. */
  prune(blockNumber: number, accountNonce: (sender: AccountHex) => number): void {
    for (const [sender, nonces] of [...this.bySender]) {
      const current = accountNonce(sender);
      for (const extrinsic of [...nonces.values()]) {
        if (extrinsic.nonce < current || extrinsic.validUntil < blockNumber) this.remove(extrinsic.hash, 'invalid');
      }
      for (let next = current; nonces.has(next); next++) this.promote(nonces.get(next) as CheckedExtrinsic);
    }
  }

  /** Drops the longest-waiting future extrinsics while more than the limit wait. */
  private enforceFutureLimit(): void {
    let futures = this.byHash.size - this.promoted.size;
    for (const [hash] of this.byHash) {
      if (futures <= this.futureLimit) return;
      if (this.promoted.has(hash)) continue;
      this.remove(hash, 'dropped');
      futures--;
    }
  }

  private promote(extrinsic: CheckedExtrinsic): void {
    if (this.promoted.has(extrinsic.hash)) return;
    this.promoted.add(extrinsic.hash);
    this.notify(extrinsic.hash, 'ready');
  }
}
