import type { ApiPromise } from '@polkadot/api';
import type { ApiDecoration } from '@polkadot/api/types';
import { delegationOf, type Delegation } from './reads/delegations.js';
import { messagesOf, type ChainMessage } from './reads/messages.js';
import { intentById, intentByName, schemaById, type Intent, type Schema } from './reads/schemas.js';

export type { Delegation, Grant } from './reads/delegations.js';
export type { ChainMessage } from './reads/messages.js';
export type { Intent, Schema } from './reads/schemas.js';

export interface Handle {
  base: string;
  canonical: string;
  suffix: number;
  display: string;
}

export interface CapacityInfo {
  remaining: bigint;
  totalIssued: bigint;
  totalStaked: bigint;
  lastReplenishedEpoch: number;
}

/** Where account state is read: storage and runtime APIs of the best block (the api) or of one block (`api.at`). */
type StateView = Pick<ApiDecoration<'promise'>, 'query' | 'call'>;

/**
 * The typed reads the services make. Account state (MSA by key, MSA existence, providers, handles, delegations)
 * is read from `state`: the best block by default, or one fixed block with `atFinalized()`, which
 * look-ups use so that nothing is reported before its block is final.
 */
export class ChainQueries {
  constructor(
    private readonly api: ApiPromise,
    private readonly state: StateView = api,
  ) {}

  /**
   * Reads account state at the newest finalized block: what an account, handle or delegation look-up answers.
   * Before a sign-up is finalized its MSA does not exist here, whatever the best block holds.
   */
  async atFinalized(): Promise<ChainQueries> {
    const hash = await this.api.rpc.chain.getFinalizedHead();
    return new ChainQueries(this.api, await this.api.at(hash));
  }

  async msaIdOf(account: string): Promise<bigint | undefined> {
    const id = await this.state.query.msa.publicKeyToMsaId(account);
    return id.isSome ? id.unwrap().toBigInt() : undefined;
  }

  /** Whether an MSA with this id was ever created (retired ones included): 0 < id ≤ the chain's highest MSA id. */
  async msaExists(msaId: bigint | number): Promise<boolean> {
    const highest = (await this.state.query.msa.currentMsaIdentifierMaximum()).toBigInt();
    return BigInt(msaId) > 0n && BigInt(msaId) <= highest;
  }

  /** An MSA's itemized page for an intent: its content hash (the targetHash of the next change) and items. */
  async itemizedPage(
    msaId: bigint | number,
    intentId: number,
  ): Promise<{ contentHash: number; items: { index: number; payload: `0x${string}` }[] }> {
    const page = (await this.api.rpc.statefulStorage.getItemizedStorage(msaId, intentId)) as unknown as {
      content_hash: { toNumber(): number };
      items: { index: { toNumber(): number }; payload: { toHex(): string } }[];
    };
    return {
      contentHash: page.content_hash.toNumber(),
      items: page.items.map((item) => ({
        index: item.index.toNumber(),
        payload: item.payload.toHex() as `0x${string}`,
      })),
    };
  }

  /** SS58 addresses of an MSA's keys. Finalized whatever the view: the node answers from an index of finalized blocks. */
  async keysOf(msaId: bigint | number): Promise<string[]> {
    const keys = await this.api.rpc.msa.getKeysByMsaId(msaId);
    return keys.isSome ? keys.unwrap().msa_keys.map((key: { toString(): string }) => key.toString()) : [];
  }

  async isProvider(msaId: bigint | number): Promise<boolean> {
    return (await this.state.query.msa.providerToRegistryEntryV2(msaId)).isSome;
  }

  /** The handle of an MSA, from the runtime API (the RPC of the same name reads only the best block). */
  async handleOf(msaId: bigint | number): Promise<Handle | undefined> {
    const handle = await this.state.call.handlesRuntimeApi.getHandleForMsa(msaId);
    if (handle.isNone) return undefined;
    const value = handle.unwrap();
    const base = value.baseHandle.toUtf8();
    const suffix = value.suffix.toNumber();
    return { base, canonical: value.canonicalBase.toUtf8(), suffix, display: `${base}.${suffix}` };
  }

  async msaOfHandle(display: string): Promise<bigint | undefined> {
    const id = await this.state.call.handlesRuntimeApi.getMsaForHandle(display);
    return id.isSome ? id.unwrap().toBigInt() : undefined;
  }

  async isValidHandle(base: string): Promise<boolean> {
    return (await this.api.rpc.handles.validateHandle(base)).isTrue;
  }

  async delegation(delegator: bigint | number, provider: bigint | number): Promise<Delegation | undefined> {
    const response = await this.state.call.msaRuntimeApi.getDelegationForMsaAndProvider(delegator, provider);
    return response.isNone ? undefined : delegationOf(response.unwrap());
  }

  async delegations(delegator: bigint | number): Promise<Delegation[]> {
    return (await this.state.call.msaRuntimeApi.getAllGrantedDelegationsByMsaId(delegator)).map(delegationOf);
  }

  /** Whether `provider` may act for `delegator` on an intent at the best block. */
  async isDelegatedFor(delegator: bigint | number, provider: bigint | number, intentId: number): Promise<boolean> {
    const best = (await this.api.rpc.chain.getHeader()).number.toNumber();
    const [answer] = await this.api.rpc.msa.checkDelegations([delegator], provider, best, intentId);
    return answer?.[1].isTrue ?? false;
  }

  async intentById(intentId: number): Promise<Intent | undefined> {
    return intentById(this.api, intentId);
  }

  /** An intent by its "namespace.descriptor" name (case-insensitive), with its schemas. */
  async intentByName(name: string): Promise<Intent | undefined> {
    return intentByName(this.api, name);
  }

  async schema(schemaId: number): Promise<Schema | undefined> {
    return schemaById(this.api, schemaId);
  }

  /**
   * The messages of an intent in blocks `fromBlock` up to but excluding `toBlock`, in order (block, index),
   * every page read. Ranges longer than the node allows are read in parts.
   */
  async messages(intentId: number, fromBlock: number, toBlock: number): Promise<ChainMessage[]> {
    return messagesOf(this.api, intentId, fromBlock, toBlock);
  }

  /** Largest payload `messages.addOnchainMessage` stores, in bytes. */
  maxMessagePayloadBytes(): number {
    return this.api.consts.messages.messagesMaxPayloadSizeBytes.toNumber();
  }

  async capacity(msaId: bigint | number): Promise<CapacityInfo | undefined> {
    const ledger = await this.api.query.capacity.capacityLedger(msaId);
    if (ledger.isNone) return undefined;
    const value = ledger.unwrap();
    return {
      remaining: value.remainingCapacity.toBigInt(),
      totalIssued: value.totalCapacityIssued.toBigInt(),
      totalStaked: value.totalTokensStaked.toBigInt(),
      lastReplenishedEpoch: value.lastReplenishedEpoch.toNumber(),
    };
  }

  async epoch(): Promise<{ current: number; start: number; length: number }> {
    const [current, info, length] = await Promise.all([
      this.api.query.capacity.currentEpoch(),
      this.api.query.capacity.currentEpochInfo(),
      this.api.query.capacity.epochLength(),
    ]);
    return { current: current.toNumber(), start: info.epochStart.toNumber(), length: length.toNumber() };
  }

  async finalizedBlock(): Promise<{ number: number; hash: string }> {
    const hash = await this.api.rpc.chain.getFinalizedHead();
    return { number: (await this.api.rpc.chain.getHeader(hash)).number.toNumber(), hash: hash.toHex() };
  }

  async bestBlock(): Promise<{ number: number; hash: string }> {
    const header = await this.api.rpc.chain.getHeader();
    return { number: header.number.toNumber(), hash: header.hash.toHex() };
  }
}
