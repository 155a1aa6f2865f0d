import { EventEmitter } from 'node:events';
import type { Header } from '@polkadot/types/interfaces';
import { compactToU8a, hexToU8a, u8aConcat, u8aToHex } from '@polkadot/util';
import { readAccount, writeAccount } from '../pallets/balances.js';
import type { AccountHex, BlockHookContext } from '../runtime/context.js';
import type { Runtime } from '../runtime/runtime.js';
import { TransactionRejected } from '../runtime/errors.js';
import { BlockBuilder, type Block } from './blockBuilder.js';
import { KeptBlocks } from './keptBlocks.js';
import { checkExtrinsic, type ChainFacts, type Hex } from './extrinsic.js';
import { TransactionPool, type TransactionStatus } from './pool.js';
import { Overlay, VersionedState, type StateView } from '../state/state.js';

/**
 * How blocks are made, as on a Frequency development node (`--sealing`): `instant` seals a block (empty blocks
 * allowed, finalized at once) for every transaction that enters the pool ready; `interval` seals one every
 * block time (finalized at once; an empty one only with `createEmptyBlocks`); `manual` seals only on
 * `engine_createBlock`. `engine_createBlock` and `engine_finalizeBlock` work in every mode.
 */
export type Sealing = 'instant' | 'interval' | 'manual';

/** A seal command, as manual seal's `EngineCommand::SealNewBlock`. */
export interface SealCommand {
  createEmpty: boolean;
  finalize: boolean;
  parentHash?: Hex;
}

/** Why a seal command made no block (manual seal's errors, with their RPC codes). */
export class SealError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'SealError';
  }
}

/** A sealed block as the base path keeps it: what a replay needs, and the hash the replay must come to. */
export interface SealedBlock {
  number: number;
  hash: Hex;
  timestamp: number;
  /** The signed extrinsics, in block order, after the timestamp inherent (rebuilt from the timestamp). */
  extrinsics: Hex[];
  /** The block enacted a runtime upgrade: the new runtime's spec version. */
  upgradedTo?: number;
}

/**
 * Where sealed blocks and finality go before they are recorded and announced (the devchain's base path). A
 * write that throws makes the seal or finalization fail, leaving the chain as it was.
 */
export interface ChainJournal {
  /** A block about to be recorded, with the number its seal finalizes to when finality moves. */
  sealed(block: SealedBlock, finalized: number | undefined): void;
  /** Finality moved to `number` without a new block (`engine_finalizeBlock`). */
  finalized(number: number): void;
  /** A reorganisation: the best chain goes back to block `number` (the blocks above it are retracted). */
  retracted(number: number): void;
}

/** A reorganisation of the best chain, as `dev_reorg` asks for it. */
export interface ReorgOptions {
  /** How many best blocks are retracted (1–3, none of them finalized); a branch one longer replaces them. */
  depth: number;
  /** Every retracted extrinsic leaves the pool as `dropped` instead of going back to it. */
  dropRetracted?: boolean;
}

/** What a reorganisation did: the blocks it retracted and the new branch that became best. */
export interface Reorganization {
  best: Block;
  retracted: Block[];
  enacted: Block[];
}

/** The deepest reorganisation the devchain makes (a node's best chain rarely moves further). */
export const MAX_REORG_DEPTH = 3;

/** A block of a replay that would not apply as recorded, or came out with another hash. */
export class ReplayError extends Error {
  constructor(
    readonly number: number,
    message: string,
  ) {
    super(`block ${number}: ${message}`);
    this.name = 'ReplayError';
  }
}

/** The least time between two sealed blocks (what a development node needs to make one). */
const SEAL_GAP_MS = 50;

export interface ChainOptions {
  sealing: Sealing;
  /**
   * Interval sealing: time between blocks. Instant sealing with a finality lag: time between the empty blocks
   * that let finality catch up.
   */
  blockTimeMs: number;
  /** Interval sealing: seal a block even when no transaction is ready (a node's `--sealing-create-empty-blocks`). */
  createEmptyBlocks?: boolean;
  /**
   * The finalized head trails the best block by this many blocks when a seal finalizes (0, the node's
   * behaviour: a block is final when it is made).
   */
  finalityLag: number;
  /** Accounts and balances at genesis. */
  endowed: ReadonlyArray<{ account: AccountHex; free: bigint }>;
  /** The chain's facts; its versions are each runtime's own. */
  facts: Omit<ChainFacts, 'genesisHash' | 'specVersion' | 'transactionVersion'>;
  /** Clock for block timestamps (tests may pin it). */
  now?: () => number;
  /** How many future extrinsics the pool keeps (512, as a node's default) before dropping the oldest. */
  futureLimit?: number;
  /** Errors that are devchain bugs (a call handler that threw something other than a runtime error). */
  onInternalError?: (error: unknown) => void;
  /** Finality stalls once it reaches this block (best blocks go on) until `resumeFinality`. */
  stallFinalityAt?: number;
  /** Every this many sealed blocks, the best chain is reorganised by `reorgDepth` (as far as finality allows). */
  reorgEvery?: number;
  /** Depth of the reorganisations `reorgEvery` makes (1–3; 1 by default). */
  reorgDepth?: number;
  /**
   * How many of the latest blocks keep their state, header and body (a node's state pruning); older finalized
   * ones are forgotten, all but genesis's header. Every block is kept when omitted (an archive).
   */
  keepBlocks?: number;
}

/** Pruning forgets blocks this many at a time (or `keepBlocks` at a time, when fewer), not one per block. */
const PRUNE_CHUNK = 256;

interface ChainEvents {
  block: [Block];
  finalized: [Block];
  reorg: [Reorganization];
  /** The best block's runtime changed: an upgrade was enacted, or a reorganisation retracted it. */
  runtime: [Runtime];
}

/** A runtime, from the first block whose state holds its code (0: genesis). */
interface RuntimeSpan {
  from: number;
  runtime: Runtime;
}

/**
 * The chain: blocks, their states, the transaction pool, sealing and finality. One best chain: a
 * reorganisation replaces its unfinalized tail (the retracted blocks stay readable by hash, their states do
 * not), so the state at a best block is addressed by its number.
 */
export class Chain extends EventEmitter<ChainEvents> {
  readonly state = new VersionedState();
  readonly pool: TransactionPool;
  private readonly kept = new KeptBlocks();
  private readonly byHash = new Map<Hex, Block>();
  /** Blocks a reorganisation retracted: still known by hash until pruning reaches their number. */
  private readonly retracted: Block[] = [];
  private finalizedNumber = 0;
  /** Where a finality stall holds the finalized head (best blocks go on), and where finality would be without it. */
  private finalityHeldAt: number | undefined;
  private finalityWanted = 0;
  private timer: NodeJS.Timeout | undefined;
  private sealScheduled = false;
  private journal: ChainJournal | undefined;
  private readonly now: () => number;
  private readonly baseFacts: Omit<ChainFacts, 'specVersion' | 'transactionVersion'>;
  /** Every runtime the best chain has run, in order. */
  private readonly runtimes: RuntimeSpan[];
  /** A runtime upgrade to enact: the block whose state first holds the new code, and the runtime. */
  private upgrade: RuntimeSpan | undefined;

  constructor(
    runtime: Runtime,
    readonly options: ChainOptions,
  ) {
    super();
    this.runtimes = [{ from: 0, runtime }];
    // Every head subscription of every client listens here; there is no sensible bound.
    this.setMaxListeners(0);
    this.pool = new TransactionPool(options.futureLimit);
    this.now = options.now ?? Date.now;
    this.finalityHeldAt = options.stallFinalityAt;
    const { reorgEvery, reorgDepth = 1 } = options;
    if (options.keepBlocks !== undefined && (!Number.isInteger(options.keepBlocks) || options.keepBlocks < 1))
      throw new RangeError('keepBlocks must be an integer ≥ 1');
    if (reorgEvery !== undefined) {
      if (!Number.isInteger(reorgEvery) || reorgEvery < 1) throw new RangeError('reorgEvery must be an integer ≥ 1');
      checkDepth(reorgDepth);
      if (options.finalityLag < reorgDepth)
        throw new RangeError(
          `reorganisations of depth ${reorgDepth} need a finality lag of at least ${reorgDepth} (finalized blocks never change)`,
        );
    }
    const genesis = this.buildGenesis();
    this.baseFacts = { ...options.facts, genesisHash: genesis.hash };
  }

  /** The runtime of the best block's state: it validates transactions and builds the next block. */
  get runtime(): Runtime {
    return (this.runtimes[this.runtimes.length - 1] as RuntimeSpan).runtime;
  }

  /** The runtime whose code the state after block `number` holds (what a node answers for that block). */
  runtimeAt(number: number): Runtime {
    return ([...this.runtimes].reverse().find((span) => span.from <= number) ?? (this.runtimes[0] as RuntimeSpan))
      .runtime;
  }

  /** The chain's facts with `runtime`'s versions (the best block's runtime when omitted). */
  factsOf(runtime: Runtime = this.runtime): ChainFacts {
    const { specVersion, transactionVersion } = runtime.facts.runtimeVersion;
    return { ...this.baseFacts, specVersion, transactionVersion };
  }

  get facts(): ChainFacts {
    return this.factsOf();
  }

  /**
   * Upgrades the runtime to `runtime` at block `at` (the next block when omitted), as a parachain enacts an
   * authorised upgrade: that block, still built by the running runtime, writes the new code and emits
   * `System.CodeUpdated`; its state and every block after it run the new one (the next block records
   * `System.LastRuntimeUpgrade`). Returns the block. Refused for a block already sealed, or while another
   * upgrade waits.
   */
  scheduleUpgrade(runtime: Runtime, at = this.best.number + 1): number {
    if (!Number.isSafeInteger(at) || at <= this.best.number)
      throw new SealError(
        16_000,
        `a runtime upgrade needs a block still to come, after #${this.best.number}, not #${at}`,
      );
    if (this.upgrade) throw new SealError(16_000, `a runtime upgrade is already scheduled at #${this.upgrade.from}`);
    this.upgrade = { from: at, runtime };
    return at;
  }

  private upgradeSpec(): number | undefined {
    return this.upgrade?.runtime.facts.runtimeVersion.specVersion;
  }

  /** The block a scheduled upgrade is enacted at, if one waits. */
  get upgradeScheduledAt(): number | undefined {
    return this.upgrade?.from;
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
    this.kept.push(block, stateRoot);
    this.byHash.set(block.hash, block);
  }

  get best(): Block {
    return this.kept.best.block;
  }

  get finalized(): Block {
    // Pruning never goes past the finalized block.
    return (this.kept.get(this.finalizedNumber) as { block: Block }).block;
  }

  /** The oldest block whose state is kept (0 until pruning forgot some; see `keepBlocks`). */
  get firstKept(): number {
    return this.kept.first;
  }

  get genesisHash(): Hex {
    return this.facts.genesisHash;
  }

  /** A block of the best chain by number; undefined past the best, or pruned (genesis is always known). */
  blockByNumber(number: number): Block | undefined {
    return this.kept.get(number)?.block;
  }

  /** A block by hash: on the best chain, or retracted by a reorganisation (kept, as a node keeps it, until pruned). */
  blockByHash(hash: string): Block | undefined {
    return this.byHash.get(hash.toLowerCase() as Hex);
  }

  /** Whether `block` is on the best chain (not retracted). Only these have a state. */
  isCanonical(block: Block): boolean {
    return this.kept.get(block.number)?.block.hash === block.hash;
  }

  /** Whether the state after `block` can be read: on the best chain, and not pruned. */
  hasState(block: Block): boolean {
    return block.number >= this.kept.first && this.isCanonical(block);
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
    const checked = this.validate(bytes);
    const stop = watcher ? this.pool.watch(checked.hash, watcher) : undefined;
    let ready: boolean;
    try {
      ready = this.pool.add(checked, checked.future);
    } catch (error) {
      stop?.();
      throw error;
    }
    // As the node's instant sealing: every import into the ready queue asks for a block (so a burst of
    // transactions makes one block with all of them, then empty ones).
    if (this.options.sealing === 'instant' && ready && !this.sealingHeld)
      void this.command({ createEmpty: true, finalize: true }).catch(() => undefined);
    return checked.hash;
  }

  /**
   * Checks an extrinsic as a node validates it: on the best state as the next block would see it after
   * initialisation, where the best block's own hash is already recorded (mortal eras born at the best block
   * need it). Throws TransactionRejected.
   */
  private validate(bytes: Uint8Array) {
    const next = new Overlay(this.stateAt());
    this.runtime.storage.set(next, 'System', 'BlockHash', [this.best.number], this.best.hash);
    return checkExtrinsic(this.runtime, this.facts, next, this.best.number + 1, bytes);
  }

  private readonly commands: Array<{ run: () => void; reject: (error: unknown) => void }> = [];
  private draining = false;

  /**
   * Queues a seal command (what `engine_createBlock` and the sealing modes send); commands run one at a time
   * in order, each on its own turn of the event loop, and resolve with the block they made.
   */
  command(command: SealCommand): Promise<Block> {
    return this.enqueue(() => this.runCommand(command));
  }

  /**
   * Queues a reorganisation of the best chain (see `reorganizeNow`), in order with the seal commands; resolves
   * with what it retracted and enacted.
   */
  reorganize(options: ReorgOptions): Promise<Reorganization> {
    return this.enqueue(() => this.reorganizeNow(options));
  }

  private enqueue<T>(work: () => T): Promise<T> {
    return new Promise((resolve, reject) => {
      if (this.stopped) return reject(new SealError(10_000, 'Server is shutting down'));
      const run = () => {
        try {
          resolve(work());
        } catch (error) {
          reject(error);
        }
      };
      this.commands.push({ run, reject });
      this.drain();
    });
  }

  private lastSealAt = 0;

  /**
   * Runs the next command on a later turn of the event loop, no sooner than `sealGapMs` after the previous
   * block: a node takes that long to author, import and finalize one, and transactions keep arriving meanwhile
   * (a burst must not outrun the mortal eras its transactions were signed with).
   */
  private drain(): void {
    if (this.draining) return;
    this.draining = true;
    const wait = Math.max(0, this.lastSealAt + SEAL_GAP_MS - Date.now());
    const run = () => {
      this.draining = false;
      const next = this.commands.shift();
      if (!next) return;
      next.run();
      this.lastSealAt = Date.now();
      if (this.commands.length > 0) this.drain();
    };
    if (wait === 0) setImmediate(run);
    else setTimeout(run, wait).unref();
  }

  private runCommand({ createEmpty, finalize, parentHash }: SealCommand): Block {
    if (this.stopped) throw new SealError(10_000, 'Server is shutting down');
    const ready = this.pool.ready((sender) => this.accountNonce(sender)).length;
    if (!createEmpty && ready === 0)
      throw new SealError(
        12_000,
        'Transaction pool is empty, set create_empty to true, if you want to create empty blocks',
      );
    if (parentHash !== undefined) {
      const parent = this.blockByHash(parentHash);
      if (!parent) throw new SealError(13_000, `Block not found: ${parentHash}`);
      // One linear chain: building on anything but the best block would fork it.
      if (parent.hash !== this.best.hash)
        throw new SealError(
          11_000,
          `Block import failed: the devchain builds only on its best block ${this.best.hash}`,
        );
    }
    return this.seal(finalize);
  }

  /**
   * Finalizes `hash` and its ancestors (engine_finalizeBlock); a block already final stays so. Throws when
   * the block is unknown.
   */
  finalizeBlock(hash: string): void {
    const block = this.blockByHash(hash);
    if (!block) throw new SealError(16_000, `Blockchain error: UnknownBlock: ${hash}`);
    if (!this.isCanonical(block))
      throw new SealError(16_000, `Blockchain error: ${hash} was retracted by a reorganisation; not on the best chain`);
    this.moveFinality(block.number);
  }

  private readonly report = (error: unknown): void => {
    if (this.options.onInternalError) this.options.onInternalError(error);
    else process.emitWarning(String(error));
  };

  /** A builder for the block after the best one, initialised (timestamp inherent applied). */
  private startBlock(timestamp: number): BlockBuilder {
    const parent = this.best;
    const { runtime } = this;
    const builder = new BlockBuilder(
      runtime,
      this.factsOf(runtime),
      this.stateAt(parent),
      parent,
      timestamp,
      this.report,
    );
    builder.initialize({ codeUpdated: this.upgrade?.from === builder.number });
    return builder;
  }

  /** Finishes a block on the best one, asks `beforeRecord` (which may refuse it), then records it. */
  private finishBlock(builder: BlockBuilder, beforeRecord: (block: Block) => void): Block {
    const { block, changes } = builder.finish(this.kept.best.stateRoot);
    beforeRecord(block);
    this.state.apply(block.number, changes);
    this.record(block, block.header.stateRoot.toU8a());
    if (this.upgrade?.from === block.number) {
      this.runtimes.push(this.upgrade);
      this.upgrade = undefined;
      this.emit('runtime', this.runtime);
    }
    return block;
  }

  /** Writes to the journal, when there is one; a failed write is reported and fails the step. */
  private journalWrite(write: (journal: ChainJournal) => void): void {
    if (!this.journal) return;
    try {
      write(this.journal);
    } catch (error) {
      this.report(error);
      throw error;
    }
  }

  /**
   * Seals the next block now with whatever is ready; `finalize` finalizes it (less the finality lag). Its
   * timestamp is no earlier than `notBefore`.
   */
  seal(finalize = true, notBefore = 0): Block {
    const parent = this.best;
    const builder = this.startBlock(Math.max(this.now(), parent.timestamp + 1, notBefore));
    const included: Hex[] = [];
    for (const extrinsic of this.pool.ready((sender) => this.accountNonce(sender, parent))) {
      const rejection = builder.apply(extrinsic);
      if (rejection instanceof TransactionRejected) this.pool.remove(extrinsic.hash, 'invalid');
      else included.push(extrinsic.hash);
    }
    const target = finalize ? Math.max(0, builder.number - this.options.finalityLag) : 0;
    const reached = this.finalityReached(target);
    const block = this.finishBlock(builder, (block) =>
      this.journalWrite((journal) =>
        journal.sealed(
          { ...sealedOf(block), ...(this.upgrade?.from === block.number ? { upgradedTo: this.upgradeSpec() } : {}) },
          reached > this.finalizedNumber ? reached : undefined,
        ),
      ),
    );
    for (const hash of included) {
      this.pool.remove(hash);
      this.pool.notify(hash, { inBlock: block.hash });
    }
    this.inBlockAwaitingFinality.push(...included.map((hash) => ({ hash, block })));
    this.pool.prune(block.number + 1, (sender) => this.accountNonce(sender));
    if ((this.runtimes[this.runtimes.length - 1] as RuntimeSpan).from === block.number) this.revalidatePool();
    this.emit('block', block);
    // As manual seal imports a block with `finalized` set: final the moment it is made (less the lag).
    this.finalizeTo(target);
    this.keepFinalityMoving();
    if (!this.reorganizing) this.reorgWhenDue();
    return block;
  }

  private reorganizing = false;
  private sealedSinceReorg = 0;

  /** `reorgEvery`: after that many sealed blocks, a reorganisation as deep as asked and finality allows. */
  private reorgWhenDue(): void {
    const { reorgEvery, reorgDepth = 1 } = this.options;
    if (reorgEvery === undefined || ++this.sealedSinceReorg < reorgEvery) return;
    this.sealedSinceReorg = 0;
    void this.enqueue(() => {
      const depth = Math.min(reorgDepth, this.best.number - this.finalizedNumber);
      if (depth >= 1) this.reorganizeNow({ depth });
    }).catch(() => undefined);
  }

  /**
   * Reorganises the best chain as fork choice does when a longer branch arrives: the last `depth` best blocks
   * are retracted (kept by hash, their states discarded) and a branch of `depth + 1` blocks is built on their
   * parent, with later timestamps, so every hash differs. The retracted extrinsics' watchers hear `retracted`;
   * the extrinsics are then re-validated on the fork point and go back to the pool (included in the new branch
   * when ready there), are `invalid` when they no longer validate, or are all `dropped` with `dropRetracted`.
   * Refused when a retracted block would be finalized.
   */
  private reorganizeNow({ depth, dropRetracted = false }: ReorgOptions): Reorganization {
    checkDepth(depth);
    const fork = this.best.number - depth;
    if (fork < this.finalizedNumber)
      throw new SealError(
        11_000,
        `Block import failed: a reorganisation of depth ${depth} from best block #${this.best.number} would ` +
          `retract finalized block #${this.finalizedNumber}; finalized blocks never change`,
      );
    this.journalWrite((journal) => journal.retracted(fork));
    const retracted = this.retractTo(fork);
    for (const block of retracted) {
      for (const bytes of block.extrinsics.slice(1)) {
        const hash = this.runtime.registry.hash(hexToU8a(bytes)).toHex() as Hex;
        this.pool.notify(hash, { retracted: block.hash });
        if (dropRetracted) this.pool.notify(hash, 'dropped');
        else this.resubmit(hash, hexToU8a(bytes));
      }
    }
    // Blocks of the new branch are final as the sealing mode makes them (manual: only when asked).
    const finalize = this.options.sealing !== 'manual';
    const enacted: Block[] = [];
    this.reorganizing = true;
    try {
      for (let index = 0; index <= depth; index++)
        enacted.push(this.seal(finalize, (retracted[index]?.timestamp ?? 0) + 1));
    } finally {
      this.reorganizing = false;
    }
    const reorganization = { best: this.best, retracted, enacted };
    this.emit('reorg', reorganization);
    return reorganization;
  }

  /**
   * After a runtime upgrade, every transaction in the pool is validated again by the new runtime, as a node does:
   * one signed for the old runtime (its spec version is in the signed payload) no longer validates and is `invalid`.
   */
  private revalidatePool(): void {
    for (const extrinsic of this.pool.pending()) {
      try {
        this.validate(extrinsic.bytes);
      } catch (error) {
        if (!(error instanceof TransactionRejected)) throw error;
        this.pool.remove(extrinsic.hash, 'invalid');
      }
    }
  }

  /** A retracted extrinsic back in the pool when it still validates on the best state; `invalid` otherwise. */
  private resubmit(hash: Hex, bytes: Uint8Array): void {
    try {
      const checked = this.validate(bytes);
      this.pool.add(checked, checked.future, true);
    } catch (error) {
      if (!(error instanceof TransactionRejected)) throw error;
      this.pool.notify(hash, 'invalid');
    }
  }

  /** The best chain back to block `number`: the blocks above it leave it (still known by hash) with their states. */
  private retractTo(number: number): Block[] {
    const retracted = this.kept.dropAfter(number);
    this.retracted.push(...retracted);
    // An upgrade enacted in a retracted block is undone with it (its code is no longer in the best state).
    const runtimeBefore = this.runtime;
    while (this.runtimes.length > 1 && (this.runtimes[this.runtimes.length - 1] as RuntimeSpan).from > number)
      this.runtimes.pop();
    if (this.runtime !== runtimeBefore) this.emit('runtime', this.runtime);
    this.state.truncate(number);
    const kept = this.inBlockAwaitingFinality.filter(({ block }) => block.number <= number);
    this.inBlockAwaitingFinality.splice(0, this.inBlockAwaitingFinality.length, ...kept);
    return retracted;
  }

  /**
   * Replays a block sealed before (the devchain's base path) on the best block: its timestamp, then its
   * extrinsics in order, each checked as a block import checks it. Throws ReplayError when one no longer
   * applies or the block comes out with another hash; the chain is then as before. Nothing is journaled or
   * announced (no client is connected yet).
   */
  importBlock(sealed: SealedBlock): Block {
    if (sealed.number !== this.best.number + 1)
      throw new ReplayError(sealed.number, `does not follow the best block ${this.best.number}`);
    if (
      sealed.upgradedTo !== undefined &&
      (this.upgrade?.from !== sealed.number || this.upgradeSpec() !== sealed.upgradedTo)
    )
      throw new ReplayError(
        sealed.number,
        `enacted the runtime upgrade to spec ${sealed.upgradedTo}, which is not scheduled at this block`,
      );
    const builder = this.startBlock(sealed.timestamp);
    sealed.extrinsics.forEach((bytes, index) => {
      const rejection = builder.import(hexToU8a(bytes));
      if (rejection)
        throw new ReplayError(sealed.number, `extrinsic ${index + 1} no longer applies: ${rejection.message}`);
    });
    const block = this.finishBlock(builder, (block) => {
      if (block.hash !== sealed.hash)
        throw new ReplayError(sealed.number, `replays to ${block.hash}, but ${sealed.hash} was sealed`);
    });
    // Finality resumes where it was: a lag's empty blocks still follow these (see keepFinalityMoving).
    const hashes = sealed.extrinsics.map((bytes) => this.runtime.registry.hash(hexToU8a(bytes)).toHex() as Hex);
    this.inBlockAwaitingFinality.push(...hashes.map((hash) => ({ hash, block })));
    return block;
  }

  /** A reorganisation of a replay: the best chain goes back to block `number` (not finalized) without journaling it. */
  restoreRetracted(number: number): void {
    if (number < this.finalizedNumber || number > this.best.number)
      throw new ReplayError(
        number,
        `retracted to, but the finalized block is ${this.finalizedNumber} and the best block ${this.best.number}`,
      );
    this.retractTo(number);
  }

  /** Finality of a replay: finalizes up to `number` (a block already imported) without journaling it. */
  restoreFinalized(number: number): void {
    if (number > this.best.number)
      throw new ReplayError(number, `finalized, but the best block is ${this.best.number}`);
    this.finalizeTo(number);
  }

  /** From now on every sealed block and every move of finality goes to `journal` first. */
  keepJournal(journal: ChainJournal): void {
    this.journal = journal;
  }

  private readonly inBlockAwaitingFinality: Array<{ hash: Hex; block: Block }> = [];

  /**
   * Stalls finality, as a network whose finality gadget stops: the finalized head stays at `at` (the finalized
   * block when omitted; a later block is still finalized when it is due) while best blocks go on. Returns the
   * block finality is held at.
   */
  stallFinality(at = this.finalizedNumber): number {
    if (!Number.isInteger(at) || at < this.finalizedNumber)
      throw new SealError(16_000, `finality is already at #${this.finalizedNumber}, past #${at}`);
    this.finalityHeldAt = at;
    this.moveFinality(this.finalityWanted);
    return at;
  }

  /** Ends a finality stall: finality catches up at once with every block due. Returns the finalized number. */
  resumeFinality(): number {
    this.finalityHeldAt = undefined;
    this.moveFinality(this.finalityWanted);
    this.keepFinalityMoving();
    return this.finalizedNumber;
  }

  get finalityStalled(): boolean {
    return this.finalityHeldAt !== undefined;
  }

  /** Where finality gets to when `wanted` is due: as far as it is wanted, but not past a stall. */
  private finalityReached(wanted: number): number {
    return Math.min(Math.max(this.finalityWanted, wanted), this.finalityHeldAt ?? Number.POSITIVE_INFINITY);
  }

  /** Finality moved without a new block (`engine_finalizeBlock`, a stall's end): journaled first, then done. */
  private moveFinality(wanted: number): void {
    const reached = this.finalityReached(wanted);
    if (reached > this.finalizedNumber) this.journalWrite((journal) => journal.finalized(reached));
    this.finalizeTo(wanted);
  }

  private finalizeTo(wanted: number): void {
    // Within a reorganisation the best chain is briefly shorter than finality may be wanted.
    const target = Math.min(this.finalityReached(wanted), this.best.number);
    this.finalityWanted = Math.max(this.finalityWanted, wanted);
    while (this.finalizedNumber < target) {
      this.finalizedNumber++;
      const block = this.kept.get(this.finalizedNumber)?.block as Block;
      this.emit('finalized', block);
      while (this.inBlockAwaitingFinality[0] && this.inBlockAwaitingFinality[0].block.number <= block.number) {
        const settled = this.inBlockAwaitingFinality.shift() as { hash: Hex; block: Block };
        this.pool.notify(settled.hash, { finalized: settled.block.hash });
      }
    }
    this.prune();
  }

  /**
   * `keepBlocks`: forgets the blocks older than the latest `keepBlocks` (finalized ones only, as a node prunes),
   * their states and the blocks retracted at their heights, a chunk at a time. Genesis's header stays.
   */
  private prune(): void {
    const { keepBlocks } = this.options;
    if (keepBlocks === undefined) return;
    const first = Math.min(this.best.number - keepBlocks + 1, this.finalizedNumber);
    if (first - this.kept.first < Math.min(PRUNE_CHUNK, keepBlocks)) return;
    for (const block of this.kept.dropBefore(first)) this.byHash.delete(block.hash);
    const staying: Block[] = [];
    for (const block of this.retracted) {
      if (block.number >= first) staying.push(block);
      else this.byHash.delete(block.hash);
    }
    this.retracted.splice(0, this.retracted.length, ...staying);
    this.state.discardBefore(first);
  }

  /**
   * Instant sealing with a finality lag (a devchain option; a node has none): empty blocks follow, one per
   * block time, until finality reaches the last transaction.
   */
  private keepFinalityMoving(): void {
    if (this.options.sealing !== 'instant' || this.options.finalityLag === 0 || this.finalityStalled) return;
    if (this.inBlockAwaitingFinality.length === 0 || this.sealScheduled || this.stopped) return;
    this.sealScheduled = true;
    setTimeout(() => {
      this.sealScheduled = false;
      if (!this.stopped) void this.command({ createEmpty: true, finalize: true }).catch(() => undefined);
    }, this.options.blockTimeMs).unref();
  }

  private sealingHeld = false;

  /**
   * Holds the sealing mode (a devchain control; a node has none): interval and instant sealing make no block until
   * `resumeSealing`, while transactions still enter the pool; `engine_createBlock` and reorganisations still work.
   * Resolves with the best block number once the seals queued before the hold have run, so that no block follows it.
   */
  holdSealing(): Promise<number> {
    this.sealingHeld = true;
    return this.enqueue(() => this.best.number);
  }

  /** Ends `holdSealing`: instant sealing seals what is ready at once; interval sealing goes on at its next tick. */
  resumeSealing(): number {
    this.sealingHeld = false;
    if (this.options.sealing === 'instant' && this.pool.ready((sender) => this.accountNonce(sender)).length > 0)
      void this.command({ createEmpty: true, finalize: true }).catch(() => undefined);
    return this.best.number;
  }

  private stopped = false;

  start(): void {
    this.stopped = false;
    // A restored chain whose finality was still catching up goes on.
    this.keepFinalityMoving();
    if (this.options.sealing === 'interval') {
      const createEmpty = this.options.createEmptyBlocks ?? true;
      this.timer = setInterval(() => {
        if (this.sealingHeld) return;
        // The node does not even try when nothing is ready and empty blocks are not wanted.
        if (!createEmpty && this.pool.ready((sender) => this.accountNonce(sender)).length === 0) return;
        void this.command({ createEmpty, finalize: true }).catch(() => undefined);
      }, this.options.blockTimeMs);
    }
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    for (const pending of this.commands.splice(0)) pending.reject(new SealError(10_000, 'Server is shutting down'));
  }
}

function checkDepth(depth: number): void {
  if (!Number.isInteger(depth) || depth < 1 || depth > MAX_REORG_DEPTH)
    throw new RangeError(`a reorganisation's depth must be 1 to ${MAX_REORG_DEPTH}, not ${depth}`);
}

export const hexOf = (bytes: Uint8Array): Hex => u8aToHex(bytes) as Hex;

/** What the journal keeps of a block (the inherent is rebuilt from the timestamp). */
const sealedOf = (block: Block): SealedBlock => ({
  number: block.number,
  hash: block.hash,
  timestamp: block.timestamp,
  extrinsics: block.extrinsics.slice(1),
});
