import { jest } from '@jest/globals';
import type { KeyringPair } from '@polkadot/keyring/types';
import type {
  PalletStatefulStorageItemizedSignaturePayloadV2,
  PalletStatefulStoragePaginatedUpsertSignaturePayloadV2,
} from '@polkadot/types/lookup';
import { u8aToHex } from '@polkadot/util';
import { encodeItems, pageHash } from '../src/pallets/statefulStorage/pages.js';
import {
  connect,
  eventNames,
  moduleError,
  nextBlock,
  signPayload,
  sponsor,
  submit,
  type Connected,
} from './support/client.js';

const KEY_AGREEMENT = 7; // Itemized, AppendOnly + SignatureRequired
const PROFILE_RESOURCES = 15; // Itemized
const PUBLIC_FOLLOWS = 8; // Paginated

type Num = { toNumber(): number };
type Hex = { toHex(): string };

describe('stateful storage pages', () => {
  it('hashes an itemized page as the runtime does', () => {
    const data = encodeItems([{ schemaId: 7, payload: new Uint8Array([1, 2, 3]) }]);
    expect(pageHash({ schemaId: undefined, nonce: 1, data })).toBe(1820234251);
    expect(pageHash({ schemaId: undefined, nonce: 1, data: new Uint8Array() })).toBe(0);
  });
});

describe('StatefulStorage pallet through a real client', () => {
  let c: Connected;
  let dave: KeyringPair;
  let daveMsa: number;
  beforeAll(async () => {
    c = await connect();
    dave = c.pair('Dave');
    daveMsa = await sponsor(c.api, c.alice, dave, [PROFILE_RESOURCES, PUBLIC_FOLLOWS, KEY_AGREEMENT]);
  });
  afterAll(async () => c.close());

  const itemizedPayload = async (schemaId: number, targetHash: number, actions: unknown[], lifetime = 100) =>
    c.api.createType('PalletStatefulStorageItemizedSignaturePayloadV2', {
      schemaId,
      targetHash,
      expiration: (await nextBlock(c.api)) + lifetime,
      actions,
    }) as unknown as PalletStatefulStorageItemizedSignaturePayloadV2;
  const applySigned = (payload: PalletStatefulStorageItemizedSignaturePayloadV2, signer = dave) =>
    submit(
      c.api.tx.frequencyTxPayment.payWithCapacity(
        c.api.tx.statefulStorage.applyItemActionsWithSignatureV2(dave.address, signPayload(signer, payload), payload),
      ),
      c.alice,
    );
  const itemized = async (intent: number) => {
    const page = await c.api.rpc.statefulStorage.getItemizedStorage(daveMsa, intent);
    return page as unknown as { content_hash: Num; nonce: Num; items: { index: Num; schema_id: Num; payload: Hex }[] };
  };

  it('adds key-agreement keys with the user signature, as the SIWF sign-up does', async () => {
    const key = u8aToHex(new Uint8Array(32).fill(9));
    const outcome = await applySigned(await itemizedPayload(KEY_AGREEMENT, 0, [{ Add: { data: key } }]));
    expect(eventNames(outcome)).toContain('statefulStorage.ItemizedPageUpdated');
    const page = await itemized(KEY_AGREEMENT);
    expect(page.items.map((item) => [item.index.toNumber(), item.schema_id.toNumber(), item.payload.toHex()])).toEqual([
      [0, KEY_AGREEMENT, key],
    ]);
    expect(page.nonce.toNumber()).toBe(1);
    const viaApi = (await c.api.call.statefulStorageRuntimeApi.getItemizedStorageV2(daveMsa, KEY_AGREEMENT)).asOk;
    expect(viaApi.contentHash.toNumber()).toBe(page.content_hash.toNumber());

    // AppendOnly: no deletes. A stale target hash, a forged and an expired proof are refused.
    const hash = page.content_hash.toNumber();
    expect(
      moduleError(c.api, await applySigned(await itemizedPayload(KEY_AGREEMENT, hash, [{ Delete: { index: 0 } }]))),
    ).toBe('statefulStorage.UnsupportedOperationForSchema');
    expect(
      moduleError(c.api, await applySigned(await itemizedPayload(KEY_AGREEMENT, 0, [{ Add: { data: key } }]))),
    ).toBe('statefulStorage.StalePageState');
    expect(
      moduleError(
        c.api,
        await applySigned(await itemizedPayload(KEY_AGREEMENT, hash, [{ Add: { data: key } }]), c.bob),
      ),
    ).toBe('statefulStorage.InvalidSignature');
    expect(moduleError(c.api, await applySigned(await itemizedPayload(KEY_AGREEMENT, hash, [], -1)))).toBe(
      'statefulStorage.ProofHasExpired',
    );
    expect(moduleError(c.api, await applySigned(await itemizedPayload(KEY_AGREEMENT, hash, [], 28_800)))).toBe(
      'statefulStorage.ProofNotYetValid',
    );
  });

  it('lets a delegated provider add and delete items, and deletes the page when it empties', async () => {
    const add = c.api.tx.statefulStorage.applyItemActions(daveMsa, PROFILE_RESOURCES, 0, [
      { Add: { data: '0x0102' } },
      { Add: { data: '0x0304' } },
    ]);
    expect(eventNames(await submit(c.api.tx.frequencyTxPayment.payWithCapacity(add), c.alice))).toContain(
      'statefulStorage.ItemizedPageUpdated',
    );
    let hash = (await itemized(PROFILE_RESOURCES)).content_hash.toNumber();
    const removeOne = c.api.tx.statefulStorage.applyItemActions(daveMsa, PROFILE_RESOURCES, hash, [
      { Delete: { index: 0 } },
    ]);
    await submit(removeOne, c.alice);
    const page = await itemized(PROFILE_RESOURCES);
    expect(page.items.map((item) => item.payload.toHex())).toEqual(['0x0304']);
    hash = page.content_hash.toNumber();
    const badIndex = c.api.tx.statefulStorage.applyItemActions(daveMsa, PROFILE_RESOURCES, hash, [
      { Delete: { index: 5 } },
    ]);
    expect(moduleError(c.api, await submit(badIndex, c.alice))).toBe('statefulStorage.InvalidItemAction');
    const removeLast = c.api.tx.statefulStorage.applyItemActions(daveMsa, PROFILE_RESOURCES, hash, [
      { Delete: { index: 0 } },
    ]);
    expect(eventNames(await submit(removeLast, c.alice))).toContain('statefulStorage.ItemizedPageDeleted');
    expect((await itemized(PROFILE_RESOURCES)).items.length).toBe(0);
    // Not delegated for this intent: Bob has no MSA; Charlie is no delegate.
    const stranger = c.api.tx.statefulStorage.applyItemActions(daveMsa, PROFILE_RESOURCES, 0, [
      { Add: { data: '0x01' } },
    ]);
    expect(moduleError(c.api, await submit(stranger, c.charlie))).toBe('statefulStorage.InvalidMessageSourceAccount');
  });

  it('upserts and deletes paginated pages, signed or through the provider', async () => {
    const payload = c.api.createType('PalletStatefulStoragePaginatedUpsertSignaturePayloadV2', {
      schemaId: PUBLIC_FOLLOWS,
      pageId: 2,
      targetHash: 0,
      expiration: (await nextBlock(c.api)) + 100,
      payload: '0xabcdef',
    }) as unknown as PalletStatefulStoragePaginatedUpsertSignaturePayloadV2;
    const upserted = await submit(
      c.api.tx.statefulStorage.upsertPageWithSignatureV2(dave.address, signPayload(dave, payload), payload),
      c.alice,
    );
    expect(eventNames(upserted)).toContain('statefulStorage.PaginatedPageUpdated');
    await submit(c.api.tx.statefulStorage.upsertPage(daveMsa, PUBLIC_FOLLOWS, 0, 0, '0x01'), c.alice);
    const pages = await c.api.rpc.statefulStorage.getPaginatedStorage(daveMsa, PUBLIC_FOLLOWS);
    expect(pages.map((p) => [p.page_id.toNumber(), p.payload.toHex(), p.nonce.toNumber()])).toEqual([
      [0, '0x01', 1],
      [2, '0xabcdef', 1],
    ]);
    const hash = pages[1]!.content_hash.toNumber();
    const deleted = await submit(c.api.tx.statefulStorage.deletePage(daveMsa, PUBLIC_FOLLOWS, 2, hash), c.alice);
    expect(eventNames(deleted)).toContain('statefulStorage.PaginatedPageDeleted');
    expect(
      moduleError(
        c.api,
        await submit(c.api.tx.statefulStorage.upsertPage(daveMsa, PUBLIC_FOLLOWS, 33, 0, '0x01'), c.alice),
      ),
    ).toBe('statefulStorage.PageIdExceedsMaxAllowed');
    const silenced = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    await expect(c.api.rpc.statefulStorage.getPaginatedStorage(daveMsa, PROFILE_RESOURCES)).rejects.toThrow(
      'PayloadLocationMismatch',
    );
    silenced.mockRestore();
    const refused = await c.api.call.statefulStorageRuntimeApi.getPaginatedStorageV2(daveMsa, 9999);
    expect(refused.isErr).toBe(true);
  });
});
