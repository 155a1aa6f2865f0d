import type { Reader } from '../msa/accounts.js';
import { intentInfo, schemaInfo } from '../schemas/info.js';
import { pageHash, pageKey, pagePrefix, parseItems, readPage, decodePage } from './pages.js';
import { hexToU8a } from '@polkadot/util';

/** Why a stateful-storage read is refused (the runtime API's DispatchError, a module error by name). */
export class StatefulReadError extends Error {
  constructor(readonly error: 'InvalidIntentId' | 'PayloadLocationMismatch' | 'InvalidSchemaId') {
    super(error);
  }
}

const intentAt = (reader: Reader, intentId: number, location: 'Itemized' | 'Paginated') => {
  const info = intentInfo(reader, intentId);
  if (!info) throw new StatefulReadError('InvalidIntentId');
  if (info.payloadLocation !== location) throw new StatefulReadError('PayloadLocationMismatch');
};

/** ItemizedStoragePageResponseV2 of an MSA's itemized page for an intent (empty when there is none). */
export function itemizedStorage(reader: Reader, msaId: number, intentId: number) {
  intentAt(reader, intentId, 'Itemized');
  const page = readPage(reader, pageKey(msaId, intentId));
  const items = parseItems(page?.data ?? new Uint8Array()) ?? [];
  return {
    msaId,
    intentId,
    contentHash: pageHash(page),
    nonce: page?.nonce ?? 0,
    items: items.map((item, index) => ({ index, schemaId: item.schemaId, payload: item.payload })),
  };
}

/** PaginatedStorageResponseV2 of every page an MSA holds for an intent, by page id. */
export function paginatedStorage(reader: Reader, msaId: number, intentId: number) {
  intentAt(reader, intentId, 'Paginated');
  const prefix = pagePrefix(msaId, intentId);
  return reader.state
    .keys(prefix)
    .filter((key) => key.length === prefix.length + 4)
    .map((key) => {
      const bytes = hexToU8a(key);
      const pageId = bytes[bytes.length - 2]! | (bytes[bytes.length - 1]! << 8);
      const page = decodePage(reader.state.get(key) as Uint8Array);
      return {
        intentId,
        pageId,
        msaId,
        schemaId: page.schemaId ?? 0,
        contentHash: pageHash(page),
        nonce: page.nonce,
        payload: page.data,
      };
    })
    .sort((a, b) => a.pageId - b.pageId);
}

/** The intent a schema implements, for the schema-keyed (v1) reads. */
export function intentOfSchema(reader: Reader, schemaId: number): number {
  const info = schemaInfo(reader, schemaId);
  if (!info) throw new StatefulReadError('InvalidSchemaId');
  return info.intentId;
}
