import type { Codec } from '@polkadot/types/types';
import { stringToU8a, u8aToHex } from '@polkadot/util';
import type { Block } from '../chain/blockBuilder.js';
import type { Chain } from '../chain/chain.js';
import type { Hex } from '../chain/extrinsic.js';
import { checkHandle, handleForMsa, msaForHandle, nextSuffixes, type SuffixRange } from '../pallets/handles/queries.js';
import { isValidHandle } from '../pallets/handles/rules.js';
import { messagesByIntent, type BlockPagination } from '../pallets/messages.js';
import type { Reader } from '../pallets/msa/accounts.js';
import { delegationResponse, delegationsOf, isActive, isGranted, readDelegation } from '../pallets/msa/delegations.js';
import {
  intentGroupResponse,
  intentResponse,
  registeredEntitiesByName,
  schemaResponse,
  schemaVersionsByName,
} from '../pallets/schemas/info.js';
import { bigintOf, msaIdOf, numberOf, someOf } from '../runtime/codecs.js';
import { checksummed, isMsaEthereumAddress, msaEthereumAddress } from '../pallets/msa/ethereumAddress.js';
import { ModuleError } from '../runtime/errors.js';
import type { Runtime } from '../runtime/runtime.js';
import {
  StatefulReadError,
  intentOfSchema,
  itemizedStorage,
  paginatedStorage,
} from '../pallets/statefulStorage/queries.js';

/** A runtime API method: decoded arguments in, a value the output type accepts out. */
export type RuntimeApiMethod = (reader: Reader & { block: Block; runtime: Runtime }, args: Codec[]) => unknown;

const u8a = (codec: Codec | undefined) => (codec as Codec).toU8a(true);
const num = (codec: Codec | undefined) => numberOf(codec as Codec);
/** An MSA id argument (u64): one beyond 2^53 names no MSA (see msaIdOf). */
const msa = (codec: Codec | undefined) => msaIdOf(codec as Codec);

/** The Frequency runtime APIs the devchain answers, by `Api_method` name. */
export function frequencyRuntimeApis(suffixes: SuffixRange): Record<string, RuntimeApiMethod> {
  return {
    HandlesRuntimeApi_get_handle_for_msa: (r, [msaId]) => {
      const handle = handleForMsa(r, msa(msaId));
      return handle && { ...handle, baseHandle: new TextEncoder().encode(handle.baseHandle) };
    },
    HandlesRuntimeApi_get_msa_for_handle: (r, [display]) => msaForHandle(r, u8a(display)) ?? null,
    HandlesRuntimeApi_get_next_suffixes: (r, [base, count]) => nextSuffixes(r, u8a(base), num(count), suffixes),
    HandlesRuntimeApi_validate_handle: (_r, [base]) => isValidHandle(u8a(base)),
    HandlesRuntimeApi_check_handle: (r, [base]) => checkHandle(r, u8a(base), suffixes),

    MsaRuntimeApi_has_delegation: (r, [delegator, provider, at, intent]) => {
      const intentId = someOf(intent as Codec);
      return intentId === undefined
        ? isActive(readDelegation(r, msa(delegator), msa(provider)), num(at))
        : isGranted(r, msa(delegator), msa(provider), numberOf(intentId), num(at));
    },
    MsaRuntimeApi_get_delegation_for_msa_and_provider: (r, [delegator, provider]) =>
      delegationResponse(r, msa(delegator), msa(provider)) ?? null,
    MsaRuntimeApi_get_granted_schemas_by_msa_id: (r, [delegator, provider]) =>
      delegationResponse(r, msa(delegator), msa(provider))?.permissions ?? null,
    MsaRuntimeApi_get_all_granted_delegations_by_msa_id: (r, [delegator]) => delegationsOf(r, msa(delegator)),
    // Pure functions of the id: the full u64 is used.
    MsaRuntimeApi_get_ethereum_address_for_msa_id: (_r, [msaId]) => {
      const address = msaEthereumAddress(bigintOf(msaId as Codec));
      // A String in the runtime: its UTF-8 bytes (a bare string would be read as hex).
      return { accountId: address, accountIdChecksummed: stringToU8a(checksummed(address)) };
    },
    MsaRuntimeApi_validate_eth_address_for_msa: (_r, [address, msaId]) =>
      isMsaEthereumAddress(u8a(address), bigintOf(msaId as Codec)),

    SchemasRuntimeApi_get_schema_by_id: (r, [schemaId]) => schemaResponse(r, num(schemaId)) ?? null,
    SchemasRuntimeApi_get_by_schema_id: (r, [schemaId]) => schemaResponse(r, num(schemaId)) ?? null,
    SchemasRuntimeApi_get_intent_by_id: (r, [intentId, include]) =>
      intentResponse(r, num(intentId), (include as unknown as { isTrue: boolean }).isTrue) ?? null,
    SchemasRuntimeApi_get_registered_entities_by_name: (r, [name]) => registeredEntitiesByName(r, u8a(name)) ?? null,
    SchemasRuntimeApi_get_schema_versions_by_name: (r, [name]) => schemaVersionsByName(r, u8a(name)) ?? null,
    SchemasRuntimeApi_get_intent_group_by_id: (r, [groupId]) => intentGroupResponse(r, num(groupId)) ?? null,
    StatefulStorageRuntimeApi_get_itemized_storage_v2: (r, [msaId, intentId]) =>
      statefulResult(r.runtime, () => itemizedStorage(r, msa(msaId), num(intentId))),
    StatefulStorageRuntimeApi_get_paginated_storage_v2: (r, [msaId, intentId]) =>
      statefulResult(r.runtime, () => paginatedStorage(r, msa(msaId), num(intentId))),
    StatefulStorageRuntimeApi_get_itemized_storage: (r, [msaId, schemaId]) =>
      statefulResult(r.runtime, () => {
        const { intentId, ...page } = itemizedStorage(r, msa(msaId), intentOfSchema(r, num(schemaId)));
        return { ...page, schemaId: num(schemaId), intentId };
      }),
    StatefulStorageRuntimeApi_get_paginated_storage: (r, [msaId, schemaId]) =>
      statefulResult(r.runtime, () => paginatedStorage(r, msa(msaId), intentOfSchema(r, num(schemaId)))),
    MessagesRuntimeApi_get_schema_by_id: (r, [schemaId]) => schemaResponse(r, num(schemaId)) ?? null,
    MessagesRuntimeApi_get_messages_by_intent_id: (r, [intentId, pagination]) =>
      messagesByIntent(r, num(intentId), (pagination as Codec).toJSON() as unknown as BlockPagination),
  };
}

/** Result<_, DispatchError> of the stateful-storage reads. */
function statefulResult(runtime: Runtime, read: () => unknown) {
  try {
    return { Ok: read() };
  } catch (error) {
    if (!(error instanceof StatefulReadError)) throw error;
    return { Err: runtime.dispatchError(new ModuleError('StatefulStorage', error.error)) };
  }
}

/**
 * Answers `state_call` for a runtime API declared in the metadata: decodes the arguments with the method's
 * input types, runs it against the state of `block` and encodes the result with its output type.
 * Undefined when the devchain does not implement the method.
 */
export function callRuntimeApi(
  chain: Chain,
  methods: Record<string, RuntimeApiMethod>,
  name: string,
  data: Uint8Array,
  block: Block,
): Hex | undefined {
  const implementation = methods[name];
  if (!implementation) return undefined;
  // The runtime whose code the block's state holds.
  const runtime = chain.runtimeAt(block.number);
  const { registry, built } = runtime;
  const separator = name.indexOf('_');
  const api = built.apis.find((a) => a.name === name.slice(0, separator));
  const method = api?.methods.find((m) => m.name === name.slice(separator + 1));
  if (!method) throw new Error(`runtime API ${name} is not in the metadata`);
  const args: Codec[] = [];
  let offset = 0;
  for (const input of method.inputs) {
    const value = registry.createType(registry.createLookupType(input.type), data.subarray(offset));
    offset += value.encodedLength;
    args.push(value);
  }
  const result = implementation({ state: chain.stateAt(block), storage: runtime.storage, block, runtime }, args);
  return u8aToHex(registry.createType(registry.createLookupType(method.output), asCodecInput(result)).toU8a()) as Hex;
}

/** polkadot-js reads a Uint8Array given for `Bytes` as SCALE (length-prefixed); raw bytes go in as hex. */
function asCodecInput(value: unknown): unknown {
  if (value instanceof Uint8Array) return u8aToHex(value);
  if (Array.isArray(value)) return value.map(asCodecInput);
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype)
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, asCodecInput(inner)]));
  return value;
}
