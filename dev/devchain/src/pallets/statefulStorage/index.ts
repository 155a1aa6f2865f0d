import type { Codec } from '@polkadot/types/types';
import { msaIdOf, numberOf } from '../../runtime/codecs.js';
import type { AccountHex, CallArgs, DispatchContext, PalletRuntime } from '../../runtime/context.js';
import { DispatchFailure, ModuleError } from '../../runtime/errors.js';
import { msaOf } from '../msa/accounts.js';
import { isGranted } from '../msa/delegations.js';
import { verifyPayloadSignature } from '@frequency-gateway/chain';
import type { Eip712Payload } from '@frequency-gateway/chain';
import { SETTING_BITS, schemaInfo, type SchemaInfo } from '../schemas/info.js';
import { encodeItems, encodePage, pageHash, pageKey, parseItems, readPage, type Item, type Page } from './pages.js';

export interface StatefulStorageLimits {
  maxItemizedPageSizeBytes: number;
  maxPaginatedPageId: number;
  mortalityWindowSize: number;
}

type Location = 'Itemized' | 'Paginated';
type Action = { type: 'Add'; data: Uint8Array } | { type: 'Delete'; index: number };

const fail = (error: string) => new ModuleError('StatefulStorage', error);

const actionsOf = (value: Codec): Action[] =>
  (value as unknown as { isAdd: boolean; asAdd: { data: Codec }; asDelete: { index: Codec } }[]).map((action) =>
    action.isAdd
      ? { type: 'Add', data: action.asAdd.data.toU8a(true) }
      : { type: 'Delete', index: numberOf(action.asDelete.index) },
  );

export function statefulStoragePallet(limits: StatefulStorageLimits): PalletRuntime {
  const checkPageId = (pageId: number) => {
    if (pageId > limits.maxPaginatedPageId) throw fail('PageIdExceedsMaxAllowed');
  };

  /** Schema and location checks; the intent's settings decide whether deletes and delegates are allowed. */
  const schemaFor = (context: DispatchContext, schemaId: number, location: Location, deletes: boolean): SchemaInfo => {
    const info = schemaInfo(context, schemaId);
    if (!info) throw fail('InvalidSchemaId');
    if (info.payloadLocation !== location) throw fail('PayloadLocationMismatch');
    if (deletes && info.settings & (SETTING_BITS.AppendOnly as number)) throw fail('UnsupportedOperationForSchema');
    return info;
  };

  /** The unsigned calls: the caller is the owner, or a provider the owner delegated the schema's intent to. */
  const authorize = (
    context: DispatchContext,
    owner: number,
    schemaId: number,
    location: Location,
    deletes: boolean,
  ) => {
    if (!schemaInfo(context, schemaId)) throw fail('InvalidSchemaId');
    if (context.origin.type !== 'signed') throw new DispatchFailure('BadOrigin');
    const caller = msaOf(context, context.origin.who);
    if (caller === undefined) throw fail('InvalidMessageSourceAccount');
    const info = schemaInfo(context, schemaId) as SchemaInfo;
    if (caller !== owner && !isGranted(context, owner, caller, info.intentId, context.blockNumber))
      throw fail('UnauthorizedDelegate');
    schemaFor(context, schemaId, location, false);
    if (caller !== owner && info.settings & (SETTING_BITS.SignatureRequired as number))
      throw fail('UnsupportedOperationForSchema');
    return schemaFor(context, schemaId, location, deletes);
  };

  /** The signed-payload calls: window (expired first), the owner's signature, the owner's MSA. */
  const acceptSigned = (context: DispatchContext, args: CallArgs, kind: Eip712Payload) => {
    if (context.origin.type !== 'signed') throw new DispatchFailure('BadOrigin');
    const payload = args.payload as unknown as Record<string, Codec> & Codec;
    if (payload.pageId !== undefined) checkPageId(numberOf(payload.pageId));
    const expiration = numberOf(payload.expiration as Codec);
    if (context.blockNumber >= expiration) throw fail('ProofHasExpired');
    if (expiration >= context.blockNumber + limits.mortalityWindowSize) throw fail('ProofNotYetValid');
    const key = (args.delegatorKey as Codec).toHex() as AccountHex;
    if (!verifyPayloadSignature(key, args.proof as Codec, payload, kind)) throw fail('InvalidSignature');
    const owner = msaOf(context, key);
    if (owner === undefined) throw fail('InvalidMessageSourceAccount');
    return { owner, payload };
  };

  const checkHash = (page: Page | undefined, targetHash: number) => {
    if (pageHash(page) !== targetHash) throw fail('StalePageState');
  };

  const applyItems = (
    context: DispatchContext,
    owner: number,
    info: SchemaInfo,
    schemaId: number,
    targetHash: number,
    actions: Action[],
  ) => {
    const key = pageKey(owner, info.intentId);
    const page = readPage(context, key);
    checkHash(page, targetHash);
    const items = parseItems(page?.data ?? new Uint8Array());
    if (!items) throw fail('CorruptedState');
    const deleted = new Set<number>();
    const added: Item[] = [];
    for (const action of actions) {
      if (action.type === 'Delete') {
        if (action.index >= items.length || deleted.has(action.index)) throw fail('InvalidItemAction');
        deleted.add(action.index);
      } else added.push({ schemaId, payload: action.data });
    }
    const data = encodeItems([...items.filter((_, index) => !deleted.has(index)), ...added]);
    if (data.length > limits.maxItemizedPageSizeBytes) throw fail('InvalidItemAction');
    const previous = pageHash(page);
    if (data.length === 0) {
      context.state.set(key, undefined);
      context.deposit('StatefulStorage', 'ItemizedPageDeleted', {
        msaId: owner,
        intentId: info.intentId,
        prevContentHash: previous,
      });
      return;
    }
    const next: Page = { schemaId: undefined, nonce: ((page?.nonce ?? 0) + 1) & 0xffff, data };
    context.state.set(key, encodePage(next));
    context.deposit('StatefulStorage', 'ItemizedPageUpdated', {
      msaId: owner,
      intentId: info.intentId,
      prevContentHash: previous,
      currContentHash: pageHash(next),
    });
  };

  const upsertPage = (
    context: DispatchContext,
    owner: number,
    info: SchemaInfo,
    schemaId: number,
    pageId: number,
    targetHash: number,
    payload: Uint8Array,
  ) => {
    const key = pageKey(owner, info.intentId, pageId);
    const page = readPage(context, key);
    checkHash(page, targetHash);
    const next: Page = { schemaId, nonce: ((page?.nonce ?? 0) + 1) & 0xffff, data: payload };
    context.state.set(key, encodePage(next));
    context.deposit('StatefulStorage', 'PaginatedPageUpdated', {
      msaId: owner,
      intentId: info.intentId,
      pageId,
      prevContentHash: pageHash(page),
      currContentHash: pageHash(next),
    });
  };

  const deletePage = (
    context: DispatchContext,
    owner: number,
    info: SchemaInfo,
    pageId: number,
    targetHash: number,
  ) => {
    const key = pageKey(owner, info.intentId, pageId);
    const page = readPage(context, key);
    // Deleting a page that does not exist succeeds quietly.
    if (!page) return;
    checkHash(page, targetHash);
    context.state.set(key, undefined);
    context.deposit('StatefulStorage', 'PaginatedPageDeleted', {
      msaId: owner,
      intentId: info.intentId,
      pageId,
      prevContentHash: pageHash(page),
    });
  };

  const n = (value: Codec | undefined) => numberOf(value as Codec);

  return {
    name: 'StatefulStorage',
    calls: {
      applyItemActions: (context, args) => {
        const owner = msaIdOf(args.stateOwnerMsaId as Codec);
        const schemaId = n(args.schemaId);
        const actions = actionsOf(args.actions as Codec);
        const info = authorize(
          context,
          owner,
          schemaId,
          'Itemized',
          actions.some((a) => a.type === 'Delete'),
        );
        applyItems(context, owner, info, schemaId, n(args.targetHash), actions);
      },
      upsertPage: (context, args) => {
        checkPageId(n(args.pageId));
        const owner = msaIdOf(args.stateOwnerMsaId as Codec);
        const schemaId = n(args.schemaId);
        const info = authorize(context, owner, schemaId, 'Paginated', false);
        upsertPage(
          context,
          owner,
          info,
          schemaId,
          n(args.pageId),
          n(args.targetHash),
          (args.payload as Codec).toU8a(true),
        );
      },
      deletePage: (context, args) => {
        checkPageId(n(args.pageId));
        const owner = msaIdOf(args.stateOwnerMsaId as Codec);
        const info = authorize(context, owner, n(args.schemaId), 'Paginated', true);
        deletePage(context, owner, info, n(args.pageId), n(args.targetHash));
      },
      applyItemActionsWithSignatureV2: (context, args) => {
        const { owner, payload } = acceptSigned(context, args, 'ItemizedSignaturePayloadV2');
        const schemaId = n(payload.schemaId);
        const actions = actionsOf(payload.actions as Codec);
        const info = schemaFor(
          context,
          schemaId,
          'Itemized',
          actions.some((a) => a.type === 'Delete'),
        );
        applyItems(context, owner, info, schemaId, n(payload.targetHash), actions);
      },
      upsertPageWithSignatureV2: (context, args) => {
        const { owner, payload } = acceptSigned(context, args, 'PaginatedUpsertSignaturePayloadV2');
        const schemaId = n(payload.schemaId);
        const info = schemaFor(context, schemaId, 'Paginated', false);
        upsertPage(
          context,
          owner,
          info,
          schemaId,
          n(payload.pageId),
          n(payload.targetHash),
          (payload.payload as Codec).toU8a(true),
        );
      },
      deletePageWithSignatureV2: (context, args) => {
        const { owner, payload } = acceptSigned(context, args, 'PaginatedDeleteSignaturePayloadV2');
        const info = schemaFor(context, n(payload.schemaId), 'Paginated', true);
        deletePage(context, owner, info, n(payload.pageId), n(payload.targetHash));
      },
    },
  };
}
