import { createHash } from 'node:crypto';
import { importer, type WritableStorage } from 'ipfs-unixfs-importer';
import { fixedSize } from 'ipfs-unixfs-importer/chunker';
import { balanced } from 'ipfs-unixfs-importer/layout';
import { CID } from 'multiformats/cid';
import * as raw from 'multiformats/codecs/raw';
import { create as createDigest } from 'multiformats/hashes/digest';
import { IMPORT_PARAMETERS } from './contentStore.js';

const SHA2_256 = 0x12;

/** Imports one file as UnixFS under the stores' shared parameters; resolves with its root CID. */
export async function importFile(
  content: AsyncIterable<Uint8Array> | Uint8Array,
  blocks: WritableStorage,
): Promise<CID> {
  let root: CID | undefined;
  for await (const entry of importer([{ content }], blocks, {
    cidVersion: IMPORT_PARAMETERS.cidVersion,
    rawLeaves: IMPORT_PARAMETERS.rawLeaves,
    reduceSingleLeafToSelf: true,
    chunker: fixedSize({ chunkSize: IMPORT_PARAMETERS.chunkSize }),
    layout: balanced({ maxChildrenPerNode: IMPORT_PARAMETERS.maxChildrenPerNode }),
    wrapWithDirectory: false,
  })) {
    root = entry.cid;
  }
  if (!root) throw new Error('the importer produced no root');
  return root;
}

/** Keeps nothing: for working out a CID without storing the blocks. */
const DISCARD: WritableStorage = { put: async (cid) => cid };

/**
 * The CID any store gives these bytes, worked out here without a store: content of up to one chunk is a
 * single raw block (its CID the sha2-256 of the bytes); longer content goes through the importer.
 */
export async function contentId(bytes: Uint8Array): Promise<string> {
  if (bytes.byteLength <= IMPORT_PARAMETERS.chunkSize) {
    const digest = createDigest(SHA2_256, createHash('sha256').update(bytes).digest());
    return CID.createV1(raw.code, digest).toString();
  }
  return (await importFile(bytes, DISCARD)).toString();
}
