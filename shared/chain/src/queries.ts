import type { ApiPromise } from '@polkadot/api';
import type { ApiDecoration } from '@polkadot/api/types';

export interface Grant {
  intentId: number;
  /** Effective revocation block (0 = active): the earlier of the delegation's and the grant's. */
  revokedAt: number;
  /** The grant's own revocation block (0 = not revoked), whatever the delegation's. */
  explicitRevokedAt: number;
}

export interface Delegation {
  providerId: bigint;
  revokedAt: number;
  grants: Grant[];
}

export interface Intent {
  intentId: number;
  payloadLocation: string;
  settings: string[];
  /** Ascending; the last is the intent's latest schema. */
  schemaIds: number[];
  latestSchemaId: number | undefined;
}

export interface Schema {
  schemaId: number;
  intentId: number;
  model: Uint8Array;
  modelType: string;
  payloadLocation: string;
  settings: string[];
  status: string;
}

export interface Handle {
  base: string;
  canonical: string;
  suffix: number;
  display: string;
}

/** A message stored on chain: its place (block, index), its schema, who sent it, and its CID or payload. */
export interface ChainMessage {
  blockNumber: number;
  index: number;
  schemaId: number;
  providerMsaId: bigint;
  /** The user it was sent for (unset: the provider's own message). */
  msaId?: bigint;
  /** IPFS messages: the CID (text) and the file's length. */
  cid?: string;
  payloadLength?: number;
  /** On-chain messages: the payload, hex. */
  payload?: `0x${string}`;
}

/** The node's paging limits for message reads. */
const MESSAGE_PAGE_SIZE = 10_000;
const MESSAGE_BLOCK_RANGE = 50_000;

export interface CapacityInfo {
  remaining: bigint;
  totalIssued: bigint;
  totalStaked: bigint;
  lastReplenishedEpoch: number;
}

const toNumber = (value: { toNumber(): number }) => value.toNumber();

type ChainDelegation = {
  providerId: { toBigInt(): bigint };
  revokedAt: { toNumber(): number };
  permissions: {
    grantedId: { toNumber(): number };
    revokedAt: { toNumber(): number };
    explicitRevokedAt: { toNumber(): number };
  }[];
};

const delegationOf = (value: ChainDelegation): Delegation => ({
  providerId: value.providerId.toBigInt(),
  revokedAt: value.revokedAt.toNumber(),
  grants: value.permissions.map((grant) => ({
    intentId: grant.grantedId.toNumber(),
    revokedAt: grant.revokedAt.toNumber(),
    explicitRevokedAt: grant.explicitRevokedAt.toNumber(),
  })),
});

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
    const response = await this.api.call.schemasRuntimeApi.getIntentById(intentId, true);
    if (response.isNone) return undefined;
    const value = response.unwrap();
    const schemaIds = value.schemaIds.isSome ? value.schemaIds.unwrap().map(toNumber) : [];
    return {
      intentId: value.intentId.toNumber(),
      payloadLocation: value.payloadLocation.toString(),
      settings: value.settings.map(String),
      schemaIds,
      latestSchemaId: schemaIds.at(-1),
    };
  }

  /** An intent by its "namespace.descriptor" name (case-insensitive), with its schemas. */
  async intentByName(name: string): Promise<Intent | undefined> {
    const found = await this.api.call.schemasRuntimeApi.getRegisteredEntitiesByName(name);
    const entity = found.isSome ? found.unwrap()[0]?.entityId : undefined;
    if (!entity?.isIntent) return undefined;
    return this.intentById(entity.asIntent.toNumber());
  }

  async schema(schemaId: number): Promise<Schema | undefined> {
    const response = await this.api.call.schemasRuntimeApi.getSchemaById(schemaId);
    if (response.isNone) return undefined;
    const value = response.unwrap();
    return {
      schemaId: value.schemaId.toNumber(),
      intentId: value.intentId.toNumber(),
      model: value.model.toU8a(true),
      modelType: value.modelType.toString(),
      payloadLocation: value.payloadLocation.toString(),
      settings: value.settings.map(String),
      status: value.status.toString(),
    };
  }

  /** Largest payload `messages.addOnchainMessage` stores, in bytes. */
  /**
   * The messages of an intent in blocks `fromBlock` up to but excluding `toBlock`, in order (block, index),
   * every page read. Ranges longer than the node allows are read in parts.
   */
  async messages(intentId: number, fromBlock: number, toBlock: number): Promise<ChainMessage[]> {
    const found: ChainMessage[] = [];
    let from = { block: fromBlock, index: 0 };
    while (from.block < toBlock) {
      const to = Math.min(toBlock, from.block + MESSAGE_BLOCK_RANGE);
      const page = await this.api.rpc.messages.getByIntentId(intentId, {
        from_block: from.block,
        from_index: from.index,
        to_block: to,
        page_size: MESSAGE_PAGE_SIZE,
      });
      for (const message of page.content) {
        found.push({
          blockNumber: message.block_number.toNumber(),
          index: message.index.toNumber(),
          schemaId: message.schema_id.toNumber(),
          providerMsaId: message.provider_msa_id.toBigInt(),
          ...(message.msa_id.isSome ? { msaId: message.msa_id.unwrap().toBigInt() } : {}),
          ...(message.cid.isSome ? { cid: new TextDecoder().decode(message.cid.unwrap().toU8a(true)) } : {}),
          ...(message.payload_length.isSome ? { payloadLength: message.payload_length.unwrap().toNumber() } : {}),
          ...(message.payload.isSome ? { payload: message.payload.unwrap().toHex() } : {}),
        });
      }
      from =
        page.has_next.isTrue && page.next_block.isSome
          ? { block: page.next_block.unwrap().toNumber(), index: page.next_index.unwrapOr(0).toNumber() }
          : { block: to, index: 0 };
    }
    return found;
  }

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
