import type { Codec } from '@polkadot/types/types';
import { u8aToHex, u8aToString } from '@polkadot/util';
import { CID } from 'multiformats/cid';
import { numberOf, someOf } from '../runtime/codecs.js';
import type { AccountHex, DispatchContext, PalletRuntime } from '../runtime/context.js';
import { DispatchFailure, ModuleError } from '../runtime/errors.js';
import { msaOf } from './msa/accounts.js';
import { isGranted } from './msa/delegations.js';
import { schemaInfo } from './schemaInfo.js';

const SHA2_256 = 0x12;
const BLAKE3 = 0x1e;

/**
 * The binary form of a CID given as a multibase string: CIDv1 only (a "Qm…" v0 CID is refused), with a
 * sha2-256 or blake3 multihash, as the runtime's CID check requires.
 */
export function cidBytes(text: Uint8Array): Uint8Array {
  let cid: CID;
  const value = u8aToString(text);
  if (value.startsWith('Qm')) throw new ModuleError('Messages', 'UnsupportedCidVersion');
  try {
    cid = CID.parse(value);
  } catch {
    throw new ModuleError('Messages', 'InvalidCid');
  }
  if (cid.version !== 1) throw new ModuleError('Messages', 'UnsupportedCidVersion');
  if (cid.multihash.code !== SHA2_256 && cid.multihash.code !== BLAKE3) throw new ModuleError('Messages', 'InvalidCid');
  return cid.bytes;
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
        const msaId = onBehalfOf === undefined ? provider : numberOf(onBehalfOf);
        if (onBehalfOf !== undefined && !isGranted(context, msaId, provider, info.intentId, context.blockNumber)) {
          throw new ModuleError('Messages', 'UnAuthorizedDelegate');
        }
        store(context, info.intentId, { payload: u8aToHex(payload), providerMsaId: provider, msaId, schemaId });
      },
    },
    onInitialize: (context) => context.storage.set(context.state, 'Messages', 'BlockMessageIndex', [], undefined),
  };
}
