import { stringToU8a, u8aConcat, u8aToHex } from '@polkadot/util';
import type { StateView } from '../../state/state.js';
import type { Reader } from '../msa/accounts.js';
import { xxhash64 } from '../handles/suffixes.js';

/** Page header version the runtime writes (PageVersion::V2). */
const PAGE_VERSION = 2;
/** ItemHeader::V2's variant index. */
const ITEM_HEADER_V2 = 1;
const ITEM_HEADER_BYTES = 5;

/** A stored page: itemized pages carry no schema id (each item has one), paginated pages do. */
export interface Page {
  schemaId: number | undefined;
  nonce: number;
  data: Uint8Array;
}

export interface Item {
  schemaId: number;
  payload: Uint8Array;
}

/**
 * Pages live in a child trie per MSA on a node; the devchain keeps them in the state under the child-storage
 * prefix, keyed by MSA and intent (and page id for paginated pages), so they follow blocks like any storage.
 */
const CHILD_PREFIX = stringToU8a(':child_storage:default:stateful:');
/** Little-endian u16 or u64. */
function le(value: number, bytes: 2 | 8): Uint8Array {
  const out = new Uint8Array(bytes);
  const view = new DataView(out.buffer);
  if (bytes === 8) view.setBigUint64(0, BigInt(value), true);
  else view.setUint16(0, value, true);
  return out;
}

export function pageKey(msaId: number, intentId: number, pageId?: number): `0x${string}` {
  const parts = [CHILD_PREFIX, le(msaId, 8), le(intentId, 2)];
  if (pageId !== undefined) parts.push(le(pageId, 2));
  return u8aToHex(u8aConcat(...parts));
}

export const pagePrefix = (msaId: number, intentId: number) =>
  u8aToHex(u8aConcat(CHILD_PREFIX, le(msaId, 8), le(intentId, 2)));

export function encodePage(page: Page): Uint8Array {
  const schema = page.schemaId === undefined ? new Uint8Array([0]) : u8aConcat([1], le(page.schemaId, 2));
  return u8aConcat([PAGE_VERSION], schema, le(page.nonce, 2), page.data);
}

export function decodePage(bytes: Uint8Array): Page {
  const hasSchema = bytes[1] === 1;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const schemaId = hasSchema ? view.getUint16(2, true) : undefined;
  const at = hasSchema ? 4 : 2;
  return { schemaId, nonce: view.getUint16(at, true), data: bytes.slice(at + 2) };
}

export function readPage(reader: Reader | { state: StateView }, key: `0x${string}`): Page | undefined {
  const bytes = reader.state.get(key);
  return bytes === undefined ? undefined : decodePage(bytes);
}

/** The page hash: 0 for no data, else the upper 32 bits of XxHash64 over the encoded page. */
export function pageHash(page: Page | undefined): number {
  if (!page || page.data.length === 0) return 0;
  return Number(xxhash64(encodePage(page)) >> 32n);
}

export function parseItems(data: Uint8Array): Item[] | undefined {
  const items: Item[] = [];
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  for (let at = 0; at < data.length;) {
    if (at + ITEM_HEADER_BYTES > data.length || data[at] !== ITEM_HEADER_V2) return undefined;
    const schemaId = view.getUint16(at + 1, true);
    const length = view.getUint16(at + 3, true);
    const start = at + ITEM_HEADER_BYTES;
    if (start + length > data.length) return undefined;
    items.push({ schemaId, payload: data.slice(start, start + length) });
    at = start + length;
  }
  return items;
}

export const encodeItems = (items: Item[]) =>
  u8aConcat(
    ...items.map((item) => u8aConcat([ITEM_HEADER_V2], le(item.schemaId, 2), le(item.payload.length, 2), item.payload)),
  );
