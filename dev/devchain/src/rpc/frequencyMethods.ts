import { hexToU8a, isHex, u8aToHex, u8aToString } from '@polkadot/util';
import { decodeAddress, encodeAddress } from '@polkadot/util-crypto';
import type { GenericExtrinsic } from '@polkadot/types';
import type { Call } from '@polkadot/types/interfaces';
import type { Chain } from '../chain/chain.js';
import type { Block } from '../chain/blockBuilder.js';
import { capacityFee, innerCalls } from '../pallets/frequencyTxPayment.js';
import { stableWeight } from '../pallets/capacityStableWeights.js';
import { delegationResponse, delegationsOf, isActive, isGranted, readDelegation } from '../pallets/msa/delegations.js';
import type { AccountHex } from '../runtime/context.js';
import { numberOf } from '../runtime/codecs.js';
import { isValidPagination, messagesByIntent } from '../pallets/messages.js';
import { intentInfo, schemaResponse } from '../pallets/schemas/info.js';
import { handleLimits } from '../pallets/handles/index.js';
import { handleForMsa, msaForHandle, nextSuffixes } from '../pallets/handles/queries.js';
import { isValidHandle } from '../pallets/handles/rules.js';
import { RpcError, invalidParams } from './errors.js';
import { StatefulReadError, itemizedStorage, paginatedStorage } from '../pallets/statefulStorage/queries.js';

type Handler = (params: unknown[]) => unknown;

/** DelegationGrant as the node serializes it: the id under both its old and its new name. */
const grantJson = (grant: { grantedId: number; revokedAt: number; explicitRevokedAt: number }) => ({
  schema_id: grant.grantedId,
  granted_id: grant.grantedId,
  revoked_at: grant.revokedAt,
  explicit_revoked_at: grant.explicitRevokedAt,
});

const toNumber = (value: unknown, name: string): number => {
  const number = typeof value === 'string' ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isInteger(number) || number < 0)
    throw invalidParams(`${name} must be a non-negative integer`);
  return number;
};

/** A refused stateful-storage read answers the node's "Runtime Error" (code 300) with the module error. */
function statefulRead<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof StatefulReadError) throw new RpcError(300, 'Runtime Error', error.error);
    throw error;
  }
}

const toText = (value: unknown, name: string): string => {
  if (typeof value !== 'string') throw invalidParams(`${name} must be a string`);
  return value;
};

/**
 * The Frequency node's own RPC methods that the gateway calls (`msa_*`, `frequencyTxPayment_*`), with the
 * node's JSON shapes.
 */
export function frequencyMethods(chain: Chain, block: (at: unknown) => Block): Record<string, Handler> {
  const { runtime } = chain;
  const reader = (at: Block) => ({ state: chain.stateAt(at), storage: runtime.storage });
  const suffixRange = handleLimits(runtime.facts);
  return {
    msa_checkDelegations: ([delegators, provider, blockNumber, intentId]) => {
      const at = toNumber(blockNumber, 'block_number');
      const providerId = toNumber(provider, 'provider_msa_id');
      const view = reader(chain.best);
      return ((delegators as unknown[]) ?? []).map((delegator) => {
        const delegatorId = toNumber(delegator, 'delegator_msa_ids');
        if (at > chain.best.number) return [delegatorId, false];
        const intents = intentId === null || intentId === undefined ? undefined : toNumber(intentId, 'schema_id');
        const valid =
          intents === undefined
            ? isActive(readDelegation(view, delegatorId, providerId), at)
            : isGranted(view, delegatorId, providerId, intents, at);
        return [delegatorId, valid];
      });
    },
    msa_grantedSchemaIdsByMsaId: ([delegator, provider]) => {
      const response = delegationResponse(
        reader(chain.best),
        toNumber(delegator, 'delegator_msa_id'),
        toNumber(provider, 'provider_msa_id'),
      );
      return response ? response.permissions.map(grantJson) : null;
    },
    msa_getAllGrantedDelegationsByMsaId: ([delegator]) =>
      delegationsOf(reader(chain.best), toNumber(delegator, 'delegator_msa_id')).map((response) => ({
        provider_id: response.providerId,
        permissions: response.permissions.map(grantJson),
        revoked_at: response.revokedAt,
      })),
    frequency_getEvents: ([at]) => {
      if (typeof at !== 'string') throw invalidParams('at must be a block hash');
      const records = runtime.storage.get(chain.stateAt(block(at)), 'System', 'Events') as unknown as Array<{
        phase: { isApplyExtrinsic: boolean; asApplyExtrinsic: { toNumber(): number } };
        event: { toU8a(): Uint8Array };
      }>;
      // RpcEvent: the phase's extrinsic index (null outside ApplyExtrinsic), the pallet and event indices and
      // the event's fields, SCALE-encoded.
      return [...records].map((record) => {
        const bytes = record.event.toU8a();
        return {
          phase: record.phase.isApplyExtrinsic ? record.phase.asApplyExtrinsic.toNumber() : null,
          pallet: bytes[0],
          event: bytes[1],
          data: u8aToHex(bytes.slice(2)),
        };
      });
    },
    frequency_getMissingNonceValues: ([account]) => {
      if (typeof account !== 'string') throw invalidParams('account must be an address');
      const who = u8aToHex(decodeAddress(account)) as AccountHex;
      // As the node: walk the ready chain from the account nonce, then list the gaps before each future nonce.
      const mine = chain.pool.pending().filter((xt) => xt.signer === who);
      const ready = new Set(chain.pool.ready((sender) => chain.accountNonce(sender)).map((xt) => xt.hash));
      let next = chain.accountNonce(who);
      for (const xt of mine.filter((x) => ready.has(x.hash)).sort((a, b) => a.nonce - b.nonce))
        if (xt.nonce === next) next += 1;
      const missing: number[] = [];
      for (const future of mine
        .filter((x) => !ready.has(x.hash))
        .map((x) => x.nonce)
        .sort((a, b) => a - b)) {
        while (next < future && missing.length < 1000) missing.push(next++);
        next += 1;
      }
      return missing;
    },
    msa_getKeysByMsaId: ([msaId]) => {
      const id = toNumber(msaId, 'msa_id');
      // The node answers from an index built from finalized blocks.
      const view = reader(chain.finalized);
      const prefix = runtime.storage.prefix('Msa', 'PublicKeyToMsaId');
      const keys: string[] = [];
      for (const key of view.state.keys(prefix)) {
        const value = view.state.get(key);
        if (!value || numberOf(runtime.registry.createType('u64', value)) !== id) continue;
        // Twox64Concat: the account id is the last 32 bytes of the key.
        keys.push(encodeAddress(hexToU8a(key).slice(-32), runtime.facts.chain.ss58Prefix));
      }
      return keys.length === 0 ? null : { msa_id: id, msa_keys: keys };
    },
    handles_getHandleForMsa: ([msaId]) => {
      const handle = handleForMsa(reader(chain.best), toNumber(msaId, 'msa_id'));
      return handle
        ? { base_handle: handle.baseHandle, canonical_base: handle.canonicalBase, suffix: handle.suffix }
        : null;
    },
    handles_getMsaForHandle: ([display]) => msaForHandle(reader(chain.best), toText(display, 'display_handle')) ?? null,
    handles_validateHandle: ([base]) => isValidHandle(new TextEncoder().encode(toText(base, 'base_handle'))),
    handles_getNextSuffixes: ([base, count]) => {
      const wanted = count === null || count === undefined ? 1 : Math.min(toNumber(count, 'count'), 100);
      const answer = nextSuffixes(reader(chain.best), toText(base, 'base_handle'), wanted, suffixRange);
      return { base_handle: answer.baseHandle, suffixes: answer.suffixes };
    },
    statefulStorage_getItemizedStorage: ([msaId, intentId]) => {
      const page = statefulRead(() =>
        itemizedStorage(reader(chain.best), toNumber(msaId, 'msa_id'), toNumber(intentId, 'intent_id')),
      );
      return {
        msa_id: page.msaId,
        intent_id: page.intentId,
        content_hash: page.contentHash,
        nonce: page.nonce,
        items: page.items.map((item) => ({
          index: item.index,
          schema_id: item.schemaId,
          payload: u8aToHex(item.payload),
        })),
      };
    },
    statefulStorage_getPaginatedStorage: ([msaId, intentId]) =>
      statefulRead(() =>
        paginatedStorage(reader(chain.best), toNumber(msaId, 'msa_id'), toNumber(intentId, 'intent_id')),
      ).map((page) => ({
        intent_id: page.intentId,
        page_id: page.pageId,
        msa_id: page.msaId,
        schema_id: page.schemaId,
        content_hash: page.contentHash,
        nonce: page.nonce,
        payload: u8aToHex(page.payload),
      })),
    schemas_getBySchemaId: ([schemaId]) => {
      const schema = schemaResponse(reader(chain.best), toNumber(schemaId, 'schema_id'));
      return schema
        ? {
            schema_id: schema.schemaId,
            model: u8aToString(schema.model),
            model_type: schema.modelType,
            payload_location: schema.payloadLocation,
            settings: schema.settings,
          }
        : null;
    },
    messages_getByIntentId: ([intentId, pagination]) => {
      const view = reader(chain.best);
      const id = toNumber(intentId, 'intent_id');
      const p = (pagination ?? {}) as Record<string, unknown>;
      const request = {
        fromBlock: toNumber(p.from_block, 'from_block'),
        fromIndex: toNumber(p.from_index, 'from_index'),
        toBlock: toNumber(p.to_block, 'to_block'),
        pageSize: toNumber(p.page_size, 'page_size'),
      };
      if (!isValidPagination(request)) throw new RpcError(1, 'InvalidPaginationRequest');
      if (!intentInfo(view, id)) throw new RpcError(4, 'InvalidIntentId');
      const page = messagesByIntent(view, id, request);
      const optional = (name: string, value: unknown) => (value === null ? {} : { [name]: value });
      return {
        content: page.content.map((m) => ({
          provider_msa_id: m.providerMsaId,
          index: m.index,
          block_number: m.blockNumber,
          ...optional('msa_id', m.msaId),
          ...optional('payload', m.payload && u8aToHex(m.payload)),
          ...optional('cid', m.cid && u8aToString(m.cid)),
          ...optional('payload_length', m.payloadLength),
          schema_id: m.schemaId,
        })),
        has_next: page.hasNext,
        ...optional('next_block', page.nextBlock),
        ...optional('next_index', page.nextIndex),
      };
    },
    frequencyTxPayment_computeCapacityFeeDetails: ([encoded, at]) => {
      if (typeof encoded !== 'string' || !isHex(encoded)) throw invalidParams('encoded_xt must be hex');
      block(at);
      const extrinsic = runtime.registry.createType('Extrinsic', hexToU8a(encoded)) as unknown as GenericExtrinsic;
      // As the node: the inner calls of a Capacity call, or the call itself; only eligible calls add weight, and
      // none eligible means no inclusion fee.
      const calls =
        runtime.payment(extrinsic.method) === 'capacity'
          ? innerCalls(extrinsic.method as never)
          : [extrinsic.method as unknown as Call];
      const weights = calls.flatMap((call) => stableWeight(call, runtime.palletName(call.callIndex)) ?? []);
      if (weights.length === 0) return { inclusionFee: null };
      const fee = capacityFee(weights, extrinsic.encodedLength);
      return {
        inclusionFee: {
          baseFee: String(fee.baseFee),
          lenFee: String(fee.lenFee),
          adjustedWeightFee: String(fee.adjustedWeightFee),
        },
      };
    },
  };
}
