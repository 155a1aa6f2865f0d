import type { Header } from '@polkadot/types/interfaces';
import { hexToU8a, isHex, u8aToHex } from '@polkadot/util';
import { blake2AsHex, decodeAddress } from '@polkadot/util-crypto';
import type { Block } from '../chain/blockBuilder.js';
import { SealError, type Chain } from '../chain/chain.js';
import type { Hex } from '../chain/extrinsic.js';
import type { TransactionStatus } from '../chain/pool.js';
import type { Key } from '../state/state.js';
import type { AccountHex } from '../runtime/context.js';
import { TransactionRejected } from '../runtime/errors.js';
import type { Runtime } from '../runtime/runtime.js';
import { invalidParams, RpcError } from './errors.js';
import { devMethods, SubscriptionSilencer, type RuntimeUpgrader } from './devMethods.js';
import { frequencyMethods } from './frequencyMethods.js';
import { runtimeCall } from './runtimeCalls.js';
import { frequencyRuntimeApis, type RuntimeApiMethod } from './runtimeApis.js';
import { handleLimits } from '../pallets/handles/index.js';

/** Pushes subscription results to the client; returns nothing. */
export type Sink = (result: unknown) => void;
type Unsubscribe = () => void;

type Handler = (params: unknown[]) => unknown;
type Subscription = (sink: Sink, params: unknown[]) => Unsubscribe;

/** A subscription method, its unsubscribe method and the notification method name of its messages. */
export interface SubscriptionSpec {
  subscribe: string;
  unsubscribe: string;
  /** Other names a node accepts for the same methods (polkadot-js uses some of them). */
  aliases?: { subscribe: string[]; unsubscribe: string[] };
  notification: string;
  start: Subscription;
}

export const NODE_NAME = 'frequency-devchain';
export const NODE_VERSION = '2.0.1-devchain';

/** A header as a node serializes it: the block number as a 0x-prefixed hex string, not a JSON number. */
export function headerJson(header: Header): Record<string, unknown> {
  const json = header.toJSON() as Record<string, unknown>;
  return { ...json, number: `0x${header.number.toNumber().toString(16)}` };
}

/**
 * The Substrate JSON-RPC methods polkadot-js uses, over the devchain. Results are JSON values as a node
 * sends them; errors are RpcError with the node's codes.
 */
export class RpcMethods {
  readonly handlers: Record<string, Handler>;
  readonly subscriptions: SubscriptionSpec[];

  private readonly runtimeApis: Record<string, RuntimeApiMethod>;
  private readonly silencer = new SubscriptionSilencer();

  /** `silenceSubscriptionsAt`: every subscription open when that block is sealed sends nothing from it on. */
  constructor(
    private readonly chain: Chain,
    private readonly options: { silenceSubscriptionsAt?: number; upgradeRuntime?: RuntimeUpgrader } = {},
  ) {
    const { silenceSubscriptionsAt } = options;
    // Registered before any subscription's listener, so that the block itself is not sent.
    if (silenceSubscriptionsAt !== undefined)
      chain.on('block', (block) => block.number === silenceSubscriptionsAt && this.silencer.silence());
    this.runtimeApis = frequencyRuntimeApis(handleLimits(chain.runtime.facts));
    this.handlers = this.buildHandlers();
    this.subscriptions = this.buildSubscriptions();
  }

  names(): string[] {
    return [
      ...Object.keys(this.handlers),
      ...this.subscriptions.flatMap((spec) => [
        spec.subscribe,
        spec.unsubscribe,
        ...(spec.aliases?.subscribe ?? []),
        ...(spec.aliases?.unsubscribe ?? []),
      ]),
    ].sort();
  }

  /** A block by hash, on the best chain or retracted by a reorganisation (headers and bodies are kept). */
  private knownBlock(at: unknown): Block {
    if (at === undefined || at === null) return this.chain.best;
    if (typeof at !== 'string' || !isHex(at, 256)) throw invalidParams('block hash must be 0x-prefixed 32 bytes');
    const block = this.chain.blockByHash(at);
    if (!block) throw new RpcError(4003, `Client error: UnknownBlock: State already discarded for ${at}`);
    return block;
  }

  /** A block whose state is queried: on the best chain and not pruned (a retracted block's state is discarded). */
  private block(at: unknown): Block {
    const block = this.knownBlock(at);
    if (!this.chain.hasState(block))
      throw new RpcError(4003, `Client error: UnknownBlock: State already discarded for ${String(at)}`);
    return block;
  }

  private blockJson(block: Block) {
    return { block: { header: headerJson(block.header), extrinsics: block.extrinsics }, justifications: null };
  }

  private storageValue(key: unknown, at: unknown): Hex | null {
    if (typeof key !== 'string' || !isHex(key)) throw invalidParams('storage key must be hex');
    const value = this.chain.stateAt(this.block(at)).get(key.toLowerCase() as Key);
    return value === undefined ? null : (u8aToHex(value) as Hex);
  }

  /** The version of the runtime a block's state holds (the best block's when omitted). */
  private runtimeVersion(at?: unknown) {
    return this.chain.runtimeAt(this.knownBlock(at).number).version().toJSON();
  }

  private buildHandlers(): Record<string, Handler> {
    const chain = this.chain;
    const { facts } = chain.runtime;
    return {
      rpc_methods: () => ({ version: 1, methods: this.names() }),
      system_chain: () => facts.chain.devChainSpec.name,
      system_name: () => NODE_NAME,
      system_version: () => NODE_VERSION,
      system_chainType: () => facts.chain.devChainSpec.chainType,
      system_properties: () => facts.chain.devChainSpec.properties,
      system_health: () => ({ peers: 0, isSyncing: false, shouldHavePeers: false }),
      system_localPeerId: () => '12D3KooWDevchainDevchainDevchainDevchainDevchain1',
      system_nodeRoles: () => ['Authority'],
      system_syncState: () => ({ startingBlock: 0, currentBlock: chain.best.number, highestBlock: chain.best.number }),
      system_accountNextIndex: ([address]) => {
        const account = u8aToHex(decodeAddress(address as string)) as AccountHex;
        const pending = chain.pool
          .pending()
          .filter((xt) => xt.signer === account)
          .map((xt) => xt.nonce);
        let next = chain.accountNonce(account);
        while (pending.includes(next)) next++;
        return next;
      },
      chain_getBlockHash: ([number]) => {
        if (number === undefined || number === null) return chain.best.hash;
        const value =
          typeof number === 'string' ? Number.parseInt(number, number.startsWith('0x') ? 16 : 10) : Number(number);
        return chain.blockByNumber(value)?.hash ?? null;
      },
      chain_getHeader: ([at]) => headerJson(this.knownBlock(at).header),
      chain_getBlock: ([at]) => this.blockJson(this.knownBlock(at)),
      chain_getFinalizedHead: () => chain.finalized.hash,
      state_getMetadata: ([at]) => u8aToHex(chain.runtimeAt(this.knownBlock(at).number).built.v14),
      state_getRuntimeVersion: ([at]) => this.runtimeVersion(at),
      state_getStorage: ([key, at]) => this.storageValue(key, at),
      state_getStorageHash: ([key, at]) => {
        const value = this.storageValue(key, at);
        return value === null ? null : blake2AsHex(hexToU8a(value));
      },
      state_getStorageSize: ([key, at]) => {
        const value = this.storageValue(key, at);
        return value === null ? null : (value.length - 2) / 2;
      },
      state_queryStorageAt: ([keys, at]) => {
        const block = this.block(at);
        return [
          { block: block.hash, changes: (keys as string[]).map((key) => [key, this.storageValue(key, block.hash)]) },
        ];
      },
      state_getKeysPaged: ([prefix, count, startKey, at]) =>
        chain
          .stateAt(this.block(at))
          .keys(((prefix as string | undefined) ?? '0x').toLowerCase() as Key)
          .filter((key) => !startKey || key > (startKey as string).toLowerCase())
          .slice(0, Number(count)),
      state_getKeys: ([prefix, at]) => chain.stateAt(this.block(at)).keys((prefix as string).toLowerCase() as Key),
      state_call: ([method, data, at]) =>
        runtimeCall(chain, this.runtimeApis, String(method), hexToU8a(String(data)), this.block(at)),
      payment_queryInfo: ([extrinsic, at]) => {
        const bytes = runtimeCall(
          chain,
          this.runtimeApis,
          'TransactionPaymentApi_query_info',
          hexToU8a(String(extrinsic)),
          this.block(at),
        );
        return chain.runtime.registry.createType('RuntimeDispatchInfo', bytes).toJSON();
      },
      author_submitExtrinsic: ([extrinsic]) => this.submit(extrinsic),
      ...frequencyMethods(chain, (at) => this.block(at)),
      ...devMethods(chain, this.silencer, this.options.upgradeRuntime),
      author_pendingExtrinsics: () => chain.pool.pending().map((xt) => u8aToHex(xt.bytes)),
      engine_createBlock: async ([createEmpty, finalize, parentHash]) => {
        if (typeof createEmpty !== 'boolean' || typeof finalize !== 'boolean')
          throw invalidParams('create_empty and finalize must be booleans');
        if (
          parentHash !== undefined &&
          parentHash !== null &&
          (typeof parentHash !== 'string' || !isHex(parentHash, 256))
        )
          throw invalidParams('parent_hash must be 0x-prefixed 32 bytes');
        const block = await this.seal(() =>
          chain.command({ createEmpty, finalize, ...(parentHash ? { parentHash: parentHash as Hex } : {}) }),
        );
        // manual seal's CreatedBlock: the hash and the import's ImportedAux (serde field names).
        return {
          hash: block.hash,
          aux: {
            header_only: false,
            clear_justification_requests: false,
            needs_justification: false,
            bad_justification: false,
            is_new_best: true,
          },
          proof_size: 0,
        };
      },
      engine_finalizeBlock: async ([hash]) => {
        if (typeof hash !== 'string' || !isHex(hash, 256)) throw invalidParams('hash must be 0x-prefixed 32 bytes');
        await this.seal(async () => chain.finalizeBlock(hash));
        return true;
      },
    };
  }

  /** Runs a sealing step, turning manual seal's errors into RPC errors with their codes. */
  private async seal<T>(step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (error) {
      if (error instanceof SealError) throw new RpcError(error.code, error.message);
      throw error;
    }
  }

  private submit(extrinsic: unknown, watcher?: (status: TransactionStatus) => void): Hex {
    if (typeof extrinsic !== 'string' || !isHex(extrinsic)) throw invalidParams('extrinsic must be hex');
    try {
      return this.chain.submit(hexToU8a(extrinsic), watcher);
    } catch (error) {
      if (error instanceof TransactionRejected) throw new RpcError(error.code, error.rpcMessage, error.data);
      throw error;
    }
  }

  private onBlock(event: 'block' | 'finalized', listener: (block: Block) => void): Unsubscribe {
    this.chain.on(event, listener);
    return () => this.chain.off(event, listener);
  }

  private buildSubscriptions(): SubscriptionSpec[] {
    const chain = this.chain;
    const heads =
      (event: 'block' | 'finalized', current: () => Block): Subscription =>
      (sink) => {
        sink(headerJson(current().header));
        return this.onBlock(event, (block) => sink(headerJson(block.header)));
      };
    const specs: SubscriptionSpec[] = [
      {
        subscribe: 'chain_subscribeNewHeads',
        unsubscribe: 'chain_unsubscribeNewHeads',
        aliases: {
          subscribe: ['chain_subscribeNewHead', 'subscribe_newHead'],
          unsubscribe: ['chain_unsubscribeNewHead', 'unsubscribe_newHead'],
        },
        notification: 'chain_newHead',
        start: heads('block', () => chain.best),
      },
      {
        subscribe: 'chain_subscribeAllHeads',
        unsubscribe: 'chain_unsubscribeAllHeads',
        notification: 'chain_allHead',
        start: heads('block', () => chain.best),
      },
      {
        subscribe: 'chain_subscribeFinalizedHeads',
        unsubscribe: 'chain_unsubscribeFinalizedHeads',
        aliases: { subscribe: ['chain_subscribeFinalisedHeads'], unsubscribe: ['chain_unsubscribeFinalisedHeads'] },
        notification: 'chain_finalizedHead',
        start: heads('finalized', () => chain.finalized),
      },
      {
        subscribe: 'state_subscribeRuntimeVersion',
        unsubscribe: 'state_unsubscribeRuntimeVersion',
        aliases: { subscribe: ['chain_subscribeRuntimeVersion'], unsubscribe: ['chain_unsubscribeRuntimeVersion'] },
        notification: 'state_runtimeVersion',
        start: (sink) => {
          sink(this.runtimeVersion());
          const changed = (runtime: Runtime) => sink(runtime.version().toJSON());
          chain.on('runtime', changed);
          return () => chain.off('runtime', changed);
        },
      },
      {
        subscribe: 'state_subscribeStorage',
        unsubscribe: 'state_unsubscribeStorage',
        notification: 'state_storage',
        start: (sink, [keys]) => {
          const watched = ((keys as string[] | undefined) ?? []).map((key) => key.toLowerCase());
          let last = new Map(watched.map((key) => [key, this.storageValue(key, chain.best.hash)]));
          sink({ block: chain.best.hash, changes: [...last] });
          return this.onBlock('block', (block) => {
            const now = new Map(watched.map((key) => [key, this.storageValue(key, block.hash)]));
            const changed = [...now].filter(([key, value]) => last.get(key) !== value);
            last = now;
            if (changed.length > 0) sink({ block: block.hash, changes: changed });
          });
        },
      },
      {
        subscribe: 'author_submitAndWatchExtrinsic',
        unsubscribe: 'author_unwatchExtrinsic',
        notification: 'author_extrinsicUpdate',
        start: (sink, [extrinsic]) => {
          let active = true;
          // Statuses go out only after the subscription id has reached the client.
          let queued: TransactionStatus[] | undefined = [];
          this.submit(extrinsic, (status) => (queued ? queued.push(status) : active && sink(status)));
          setImmediate(() => {
            for (const status of queued ?? []) if (active) sink(status);
            queued = undefined;
          });
          return () => (active = false);
        },
      },
    ];
    return specs.map((spec) => ({ ...spec, start: (sink, params) => spec.start(this.silencer.sink(sink), params) }));
  }
}
