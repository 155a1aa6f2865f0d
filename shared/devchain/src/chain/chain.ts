import { EventEmitter } from 'node:events';
import type { Header } from '@polkadot/types/interfaces';
import { compactToU8a, hexToU8a, u8aConcat, u8aToHex } from '@polkadot/util';
import { readAccount, writeAccount } from '../pallets/balances.js';
import type { AccountHex, BlockHookContext } from '../runtime/context.js';
import type { Runtime } from '../runtime/runtime.js';
import { TransactionRejected } from '../runtime/errors.js';
import { BlockBuilder, type Block } from './blockBuilder.js';
import { checkExtrinsic, type ChainFacts, type Hex } from './extrinsic.js';
import { TransactionPool, type TransactionStatus } from './pool.js';
import { Overlay, VersionedState, type StateView } from './state.js';

export type Sealing = 'instant' | 'interval';

// Long enough for a client on a loaded machine (CI runs several chains and services at once) to fetch the
// block's events after hearing inBlock; 100 ms lost that race under load.
const FINALITY_ANNOUNCEMENT_DELAY_MS = 250;

export interface ChainOptions {
  sealing: Sealing;
  /** Interval sealing: time between blocks. Instant sealing: time between the empty blocks that let finality catch up. */
  blockTimeMs: number;
  /** The finalized head trails the best block by this many blocks. */
  finalityLag: number;
  /** Accounts and balances at genesis. */
  endowed: ReadonlyArray<{ account: AccountHex; free: bigint }>;
  facts: Omit<ChainFacts, 'genesisHash'>;
  /** Clock for block timestamps (tests may pin it). */
  now?: () => number;
  /** How many future extrinsics the pool keeps (512, as a node's default) before dropping the oldest. */
  futureLimit?: number;
  /** Errors that are devchain bugs (a call handler that threw something other than a runtime error). */
  onInternalError?: (error: unknown) => void;
}

interface ChainEvents {
  block: [Block];
  finalized: [Block];
}

/**
 * The chain: blocks, their states, the transaction pool, sealing and finality. One linear chain with no
 * forks, so the state at a block is addressed by its number.
 */
export class Chain extends EventEmitter<ChainEvents> {
  readonly state = new VersionedState();
  readonly pool: TransactionPool;
  private readonly blocks: Block[] = [];
  private readonly byHash = new Map<Hex, Block>();
  private readonly stateRoots: Uint8Array[] = [];
  private finalizedNumber = 0;
  private timer: NodeJS.Timeout | undefined;
  private sealScheduled = false;
  private readonly now: () => number;
  readonly facts: ChainFacts;

  constructor(
    readonly runtime: Runtime,
    readonly options: ChainOptions,
  ) {
    super();
    this.pool = new TransactionPool(options.futureLimit);
    this.now = options.now ?? Date.now;
    const genesis = this.buildGenesis();
    this.facts = { ...options.facts, genesisHash: genesis.hash };
  }

  private buildGenesis(): Block {
    const { storage, registry } = this.runtime;
    const overlay = new Overlay(this.state.at(0));
    const context: BlockHookContext = { state: overlay, storage, registry, blockNumber: 0, deposit: () => undefined };
    for (const { account, free } of this.options.endowed) {
      const info = readAccount(context, account);
      info.providers = 1;
      info.data.free = free;
      info.data.flags = 1n << 127n;
      writeAccount(context, account, info);
    }
    storage.set(overlay, 'System', 'LastRuntimeUpgrade', [], {
      specVersion: this.runtime.facts.runtimeVersion.specVersion,
      specName: this.runtime.facts.runtimeVersion.specName,
    });
    for (const pallet of this.runtime.palletRuntimes()) pallet.genesis?.(context);
    const changes = overlay.changes();
    const stateRoot = registry.hash(u8aConcat(...[...changes.keys()].sort().map((key) => hexToU8a(key))));
    const header = registry.createType<Header>('Header', {
      parentHash: new Uint8Array(32),
      number: 0,
      stateRoot,
      extrinsicsRoot: registry.hash(compactToU8a(0)),
      digest: { logs: [] },
    });
    const block: Block = { number: 0, hash: header.hash.toHex() as Hex, header, extrinsics: [], timestamp: this.now() };
    const withHash = new Map(changes);
    withHash.set(storage.key('System', 'BlockHash', 0), hexToU8a(block.hash));
    this.state.apply(0, withHash);
    this.record(block, stateRoot.toU8a());
    return block;
  }

  private record(block: Block, stateRoot: Uint8Array): void {
    this.blocks.push(block);
    this.byHash.set(block.hash, block);
    this.stateRoots.push(stateRoot);
  }

  get best(): Block {
    return this.blocks[this.blocks.length - 1] as Block;
  }

  get finalized(): Block {
    return this.blocks[this.finalizedNumber] as Block;
  }

  get genesisHash(): Hex {
    return this.facts.genesisHash;
  }

  blockByNumber(number: number): Block | undefined {
    return this.blocks[number];
  }

  blockByHash(hash: string): Block | undefined {
    return this.byHash.get(hash.toLowerCase() as Hex);
  }

  /** The state after `block` (the best block when omitted). */
  stateAt(block: Block = this.best): StateView {
    return this.state.at(block.number);
  }

  accountNonce(account: AccountHex, block: Block = this.best): number {
    return readAccount({ state: this.stateAt(block), storage: this.runtime.storage }, account).nonce;
  }

  /** Checks an extrinsic and puts it in the pool; throws TransactionRejected with the node's RPC error. */
  submit(bytes: Uint8Array, watcher?: (status: TransactionStatus) => void): Hex {
    // As a node validates: on the best state as the next block would see it after initialisation, where
    // the best block's own hash is already recorded (mortal eras born at the best block need it).
    const next = new Overlay(this.stateAt());
    this.runtime.storage.set(next, 'System', 'BlockHash', [this.best.number], this.best.hash);
    const checked = checkExtrinsic(this.runtime, this.facts, next, this.best.number + 1, bytes);
    const stop = watcher ? this.pool.watch(checked.hash, watcher) : undefined;
    try {
      this.pool.add(checked, checked.future);
    } catch (error) {
      stop?.();
      throw error;
    }
    if (this.options.sealing === 'instant' && !checked.future) this.scheduleSeal(0);
    return checked.hash;
  }

  /** Seals the next block now with whatever is ready. */
  seal(): Block {
    const parent = this.best;
    const timestamp = Math.max(this.now(), parent.timestamp + 1);
    const report = this.options.onInternalError ?? ((error: unknown) => process.emitWarning(String(error)));
    const builder = new BlockBuilder(this.runtime, this.facts, this.stateAt(parent), parent, timestamp, report);
    builder.initialize();
    const included: Hex[] = [];
    for (const extrinsic of this.pool.ready((sender) => this.accountNonce(sender, parent))) {
      const rejection = builder.apply(extrinsic);
      if (rejection instanceof TransactionRejected) this.pool.remove(extrinsic.hash, 'invalid');
      else included.push(extrinsic.hash);
    }
    const { block, changes } = builder.finish(this.stateRoots[parent.number] as Uint8Array);
    this.state.apply(block.number, changes);
    this.record(block, block.header.stateRoot.toU8a());
    for (const hash of included) {
      this.pool.remove(hash);
      this.pool.notify(hash, { inBlock: block.hash });
    }
    this.inBlockAwaitingFinality.push(...included.map((hash) => ({ hash, block })));
    this.pool.prune(block.number + 1, (sender) => this.accountNonce(sender));
    this.emit('block', block);
    this.advanceFinality();
    return block;
  }

  private readonly inBlockAwaitingFinality: Array<{ hash: Hex; block: Block }> = [];

  private advanceFinality(): void {
    const target = Math.max(0, this.best.number - this.options.finalityLag);
    if (target <= this.finalizedNumber) return this.keepFinalityMoving();
    // A client fetches a block's events when it hears inBlock; a finality announcement that comes before the
    // fetch completes overtakes it (polkadot-js then drops the inBlock result), so it comes a moment later.
    setTimeout(() => {
      while (this.finalizedNumber < target) {
        this.finalizedNumber++;
        const block = this.blocks[this.finalizedNumber] as Block;
        this.emit('finalized', block);
        while (this.inBlockAwaitingFinality[0] && this.inBlockAwaitingFinality[0].block.number <= block.number) {
          const settled = this.inBlockAwaitingFinality.shift() as { hash: Hex; block: Block };
          this.pool.notify(settled.hash, { finalized: settled.block.hash });
        }
      }
      this.keepFinalityMoving();
    }, FINALITY_ANNOUNCEMENT_DELAY_MS).unref();
  }

  /** Instant sealing with a finality lag: empty blocks follow until finality reaches the last transaction. */
  private keepFinalityMoving(): void {
    if (this.options.sealing !== 'instant' || this.inBlockAwaitingFinality.length === 0) return;
    this.scheduleSeal(this.options.blockTimeMs);
  }

  private scheduleSeal(delayMs: number): void {
    if (this.sealScheduled || this.stopped) return;
    this.sealScheduled = true;
    setTimeout(() => {
      this.sealScheduled = false;
      if (!this.stopped) this.seal();
    }, delayMs).unref();
  }

  private stopped = false;

  start(): void {
    this.stopped = false;
    if (this.options.sealing === 'interval') this.timer = setInterval(() => this.seal(), this.options.blockTimeMs);
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }
}

export const hexOf = (bytes: Uint8Array): Hex => u8aToHex(bytes) as Hex;
