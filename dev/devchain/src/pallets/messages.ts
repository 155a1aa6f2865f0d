import type { Codec } from '@polkadot/types/types';
import { hexToU8a, stringToU8a, u8aToHex } from '@polkadot/util';
import { bases } from 'multiformats/basics';
import { CID } from 'multiformats/cid';
import { msaIdOf, numberOf, someOf } from '../runtime/codecs.js';
import type { AccountHex, DispatchContext, PalletRuntime } from '../runtime/context.js';
import { DispatchFailure, ModuleError } from '../runtime/errors.js';
import { msaOf, type Reader } from './msa/accounts.js';
import { isGranted } from './msa/delegations.js';
import { intentInfo, schemaInfo } from './schemas/info.js';

const SHA2_256 = 0x12;
const BLAKE3 = 0x1e;

/** Every multibase the runtime's decoder knows, by prefix character. */
const MULTIBASE_DECODERS = new Map(Object.values(bases).map((base) => [base.prefix as string, base.decoder]));
const MULTIBASE = {
  decode(text: string): Uint8Array {
    const decoder = MULTIBASE_DECODERS.get(String.fromCodePoint(text.codePointAt(0) as number));
    if (!decoder) throw new Error('unknown multibase');
    return decoder.decode(text);
  },
};

/**
 * The binary form of a CID given as a multibase string, as the runtime's `validate_cid` takes it: UTF-8, longer
 * than two characters, not a "Qm…" CIDv0 string, any multibase, a parsable CID with a sha2-256 or blake3
 * multihash.
 */
export function cidBytes(text: Uint8Array): Uint8Array {
  let value: string;
  try {
    value = new TextDecoder('utf-8', { fatal: true }).decode(text);
  } catch {
    throw new ModuleError('Messages', 'InvalidCid');
  }
  if (value.length <= 2) throw new ModuleError('Messages', 'InvalidCid');
  if (value.startsWith('Qm')) throw new ModuleError('Messages', 'UnsupportedCidVersion');
  let bytes: Uint8Array;
  let cid: CID;
  try {
    bytes = MULTIBASE.decode(value);
    cid = CID.decode(bytes);
  } catch {
    throw new ModuleError('Messages', 'InvalidCid');
  }
  if (cid.multihash.code !== SHA2_256 && cid.multihash.code !== BLAKE3) throw new ModuleError('Messages', 'InvalidCid');
  return bytes;
}

const sender = (context: DispatchContext): AccountHex => {
  if (context.origin.type !== 'signed') throw new DispatchFailure('BadOrigin');
  return context.origin.who;
};

/** Stores a message under (block, intent, index); the block's first message announces MessagesInBlock. */
function store(context: DispatchContext, intentId: number, message: Record<string, unknown>): void {
  const index = numberOf(context.storage.get(context.state, 'Messages', 'BlockMessageIndex'));
  if (index === 0xffff) throw new ModuleError('Messages', 'TooManyMessagesInBlock');
  context.storage.set(context.state, 'Messages', 'MessagesV3', [context.blockNumber, intentId, index], message);
  context.storage.set(context.state, 'Messages', 'BlockMessageIndex', [], index + 1);
  if (index === 0) context.deposit('Messages', 'MessagesInBlock');
}

export function messagesPallet(maxPayloadBytes: number): PalletRuntime {
  const schemaFor = (context: DispatchContext, schemaId: number, location: 'IPFS' | 'OnChain') => {
    const info = schemaInfo(context, schemaId);
    if (!info) throw new ModuleError('Messages', 'InvalidSchemaId');
    if (info.payloadLocation !== location) throw new ModuleError('Messages', 'InvalidPayloadLocation');
    return info;
  };
  const providerOf = (context: DispatchContext) => {
    const msaId = msaOf(context, sender(context));
    if (msaId === undefined) throw new ModuleError('Messages', 'InvalidMessageSourceAccount');
    return msaId;
  };

  return {
    name: 'Messages',
    calls: {
      addIpfsMessage: (context, args) => {
        const cid = cidBytes((args.cid as Codec).toU8a(true));
        const payloadLength = numberOf(args.payloadLength as Codec);
        const payload = context.registry.createType('(Bytes, u32)', [u8aToHex(cid), payloadLength]).toU8a();
        if (payload.length > maxPayloadBytes) throw new ModuleError('Messages', 'ExceedsMaxMessagePayloadSizeBytes');
        const schemaId = numberOf(args.schemaId as Codec);
        const info = schemaFor(context, schemaId, 'IPFS');
        store(context, info.intentId, {
          payload: u8aToHex(payload),
          providerMsaId: providerOf(context),
          msaId: null,
          schemaId,
        });
      },
      addOnchainMessage: (context, args) => {
        const payload = (args.payload as Codec).toU8a(true);
        if (payload.length > maxPayloadBytes) throw new ModuleError('Messages', 'ExceedsMaxMessagePayloadSizeBytes');
        const schemaId = numberOf(args.schemaId as Codec);
        const info = schemaFor(context, schemaId, 'OnChain');
        const provider = providerOf(context);
        const onBehalfOf = someOf(args.onBehalfOf as Codec);
        const msaId = onBehalfOf === undefined ? provider : msaIdOf(onBehalfOf);
        if (onBehalfOf !== undefined && !isGranted(context, msaId, provider, info.intentId, context.blockNumber)) {
          throw new ModuleError('Messages', 'UnAuthorizedDelegate');
        }
        store(context, info.intentId, { payload: u8aToHex(payload), providerMsaId: provider, msaId, schemaId });
      },
    },
    onInitialize: (context) => context.storage.set(context.state, 'Messages', 'BlockMessageIndex', [], undefined),
  };
}

export interface BlockPagination {
  fromBlock: number;
  fromIndex: number;
  toBlock: number;
  pageSize: number;
}

const MAX_PAGE_SIZE = 10_000;
const MAX_BLOCK_RANGE = 50_000;

export const isValidPagination = (p: BlockPagination) =>
  p.pageSize > 0 &&
  p.pageSize <= MAX_PAGE_SIZE &&
  p.fromBlock < p.toBlock &&
  p.toBlock - p.fromBlock <= MAX_BLOCK_RANGE;

/** MessageResponseV2 of every message of an intent in one block, by index. */
function messagesInBlock(reader: Reader, intentId: number, location: string, blockNumber: number) {
  if (location !== 'OnChain' && location !== 'IPFS') return [];
  const { storage, state } = reader;
  const prefix = hexToU8a(storage.prefix('Messages', 'MessagesV3', blockNumber, intentId));
  return state
    .keys(u8aToHex(prefix))
    .map((key) => {
      // Twox64Concat(index): the u16 index is the key's last two bytes.
      const index = storage.registry.createType('u16', hexToU8a(key).slice(-2)).toNumber();
      const message = storage.registry.createType('PalletMessagesMessage', state.get(key)) as unknown as {
        payload: Codec;
        providerMsaId: Codec;
        msaId: Codec;
        schemaId: Codec;
      };
      const base = {
        providerMsaId: numberOf(message.providerMsaId),
        index,
        blockNumber,
        msaId: someOf(message.msaId) === undefined ? null : numberOf(someOf(message.msaId) as Codec),
        schemaId: numberOf(message.schemaId),
      };
      if (location === 'OnChain')
        return { ...base, payload: message.payload.toU8a(true), cid: null, payloadLength: null };
      const [cid, payloadLength] = storage.registry.createType(
        '(Bytes, u32)',
        message.payload.toU8a(true),
      ) as unknown as [Codec, Codec];
      return {
        ...base,
        payload: null,
        cid: stringToU8a(CID.decode(cid.toU8a(true)).toString()),
        payloadLength: numberOf(payloadLength),
      };
    })
    .sort((a, b) => a.index - b.index);
}

/**
 * MessagesRuntimeApi get_messages_by_intent_id: a page of an intent's messages over a block range, with the
 * runtime's quirks (the first block skips `fromIndex - 1` messages; the next index counts from there).
 */
export function messagesByIntent(reader: Reader, intentId: number, pagination: BlockPagination) {
  const response = {
    content: [] as ReturnType<typeof messagesInBlock>,
    hasNext: false,
    nextBlock: null as number | null,
    nextIndex: null as number | null,
  };
  if (!isValidPagination(pagination)) return response;
  const intent = intentInfo(reader, intentId);
  if (!intent) return response;
  let skip = Math.max(pagination.fromIndex - 1, 0);
  for (let block = pagination.fromBlock; block < pagination.toBlock; block++) {
    const list = messagesInBlock(reader, intentId, intent.payloadLocation, block);
    const page = list.slice(skip);
    skip = 0;
    for (const [i, message] of page.entries()) {
      response.content.push(message);
      if (response.content.length === pagination.pageSize) {
        let nextBlock = block;
        let nextIndex = i + 1;
        if (nextIndex === list.length) {
          nextBlock = block + 1;
          nextIndex = 0;
        }
        if (nextBlock < pagination.toBlock) Object.assign(response, { hasNext: true, nextBlock, nextIndex });
        return response;
      }
    }
  }
  return response;
}
