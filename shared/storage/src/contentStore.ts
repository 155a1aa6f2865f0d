/** What adding content produced: its CID (v1), its length in bytes and its DSNP content hash. */
export interface StoredContent {
  cid: string;
  size: number;
  dsnpHash: string;
}

export interface AddOptions {
  /** Refuse (ContentTooLargeError) content longer than this; nothing is kept. Default: unlimited. */
  maxBytes?: number;
  /**
   * Keep what is added (default). `false` adds without pinning, for content that is kept only once something
   * else decides so (then `pin(cid)`): until then Kubo's garbage collection may take it.
   */
  pin?: boolean;
  signal?: AbortSignal;
}

export interface ReadOptions {
  offset?: number;
  length?: number;
  signal?: AbortSignal;
}

/**
 * Where the gateway keeps content: assets, ActivityContent documents and Parquet batch files. Every
 * implementation makes the same CID from the same bytes: CIDv1, raw leaves, 256 KiB chunks, sha2-256,
 * a balanced DAG of at most 174 links per node (Kubo's `add --cid-version=1`).
 */
export interface ContentStore {
  /** Where it lives, safe to show in /healthz (no credentials). */
  readonly target: string;
  /**
   * Streams content in; the DSNP hash is computed on the way. What is added is kept (Kubo pins it, unless
   * `pin: false`; the embedded store never collects).
   */
  add(source: AsyncIterable<Uint8Array> | Uint8Array, options?: AddOptions): Promise<StoredContent>;
  /**
   * Adds pieces of content held in memory all at once (Kubo: one RPC call and one pin for all of them), each
   * with the CID it gets when added alone, and each kept. Answers in the order given; fails as a whole.
   */
  addAll(contents: readonly Uint8Array[], options?: { signal?: AbortSignal }): Promise<StoredContent[]>;
  /** Streams content out. */
  read(cid: string, options?: ReadOptions): AsyncIterable<Uint8Array>;
  /** The content's length in bytes, or undefined when the store does not have it. */
  stat(cid: string, options?: { signal?: AbortSignal }): Promise<{ cid: string; size: number } | undefined>;
  exists(cid: string, options?: { signal?: AbortSignal }): Promise<boolean>;
  /** Keeps the content (and every block of it) from garbage collection. */
  pin(cid: string, options?: { signal?: AbortSignal }): Promise<void>;
  /** Resolves when the store answers; rejects when it does not (a readiness probe). */
  probe(signal: AbortSignal): Promise<void>;
  close?(): Promise<void>;
}

/** Same import parameters everywhere, so both stores derive identical CIDs. */
export const IMPORT_PARAMETERS = {
  cidVersion: 1,
  rawLeaves: true,
  chunkSize: 262_144,
  maxChildrenPerNode: 174,
  hashAlg: 'sha2-256',
} as const;

/** The public URL of a CID from a gateway template such as `https://ipfs.io/ipfs/[CID]`. */
export function publicUrl(template: string, cid: string): string {
  return template.includes('[CID]') ? template.replaceAll('[CID]', cid) : `${template.replace(/\/+$/, '')}/ipfs/${cid}`;
}

export async function* asChunks(source: AsyncIterable<Uint8Array> | Uint8Array): AsyncGenerator<Uint8Array> {
  if (source instanceof Uint8Array) {
    yield source;
    return;
  }
  yield* source;
}

export class ContentNotFoundError extends Error {
  constructor(readonly cid: string) {
    super(`content ${cid} is not in the store`);
    this.name = 'ContentNotFoundError';
  }
}
