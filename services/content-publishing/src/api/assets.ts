import { PassThrough } from 'node:stream';
import type { Request, RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import multer, { type StorageEngine } from 'multer';
import { badRequest } from '@frequency-gateway/platform';
import { ContentTooLargeError, type ContentStore, type StoredContent } from '@frequency-gateway/storage';

/** MIME types an asset may have (images, video, audio, Parquet batch files), matched whole. */
export const UPLOAD_MIME_TYPES =
  /^(image\/(jpeg|png|svg\+xml|webp|gif)|video\/(mpeg|ogg|webm|h265|H265|mp4)|audio\/(mpeg|ogg|webm)|application\/(vnd\.apache\.parquet|x-parquet))$/;

/** What the api keeps about an uploaded asset, so announcements can reference it by CID. */
export interface AssetMetadata {
  cid: string;
  dsnpHash: string;
  mimeType: string;
  size: number;
  type: 'image' | 'video' | 'audio' | 'parquet';
  createdOn: string;
}

const assetType = (mimeType: string): AssetMetadata['type'] =>
  mimeType.startsWith('image/')
    ? 'image'
    : mimeType.startsWith('video/')
      ? 'video'
      : mimeType.startsWith('audio/')
        ? 'audio'
        : 'parquet';

export class AssetCatalog {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(cid: string): string {
    return `${this.prefix}:asset:${cid}`;
  }

  async save(stored: StoredContent, mimeType: string): Promise<AssetMetadata> {
    const metadata: AssetMetadata = {
      cid: stored.cid,
      dsnpHash: stored.dsnpHash,
      mimeType,
      size: stored.size,
      type: assetType(mimeType),
      createdOn: new Date().toISOString(),
    };
    await this.redis.set(this.key(stored.cid), JSON.stringify(metadata));
    return metadata;
  }

  async get(cid: string): Promise<AssetMetadata | undefined> {
    return (await this.getMany([cid]))[0];
  }

  /** The metadata of each CID, in order (undefined where nothing was uploaded). */
  async getMany(cids: readonly string[]): Promise<(AssetMetadata | undefined)[]> {
    if (cids.length === 0) return [];
    const values = await this.redis.mget(cids.map((cid) => this.key(cid)));
    return values.map((json) => (json === null ? undefined : (JSON.parse(json) as AssetMetadata)));
  }
}

/** One uploaded part's outcome, in request order. */
export type UploadResult = { cid: string } | { error: string };

export interface UploadLimits {
  maxFileBytes: number;
  maxFiles: number;
  /** Types this route accepts; all asset types by default. */
  mimeTypes?: RegExp;
}

export const TOO_MANY_FILES = 'Max file upload count per request exceeded';

type Uploaded = Express.Multer.File & { result?: UploadResult };

/**
 * A multer storage engine that streams each part straight into the content store (never a whole file in
 * memory), refuses disallowed MIME types, parts past the count limit and parts over the size limit, and
 * records each stored asset in the catalog. Every part gets a result; the request is never failed by one part.
 */
class ContentStoreEngine implements StorageEngine {
  constructor(
    private readonly store: ContentStore,
    private readonly catalog: AssetCatalog,
    private readonly limits: UploadLimits,
  ) {}

  _handleFile(
    request: Request,
    file: Express.Multer.File,
    done: (error?: unknown, info?: Partial<Uploaded>) => void,
  ): void {
    const counted = ((request as Request & { uploadCount?: number }).uploadCount ?? 0) + 1;
    (request as Request & { uploadCount?: number }).uploadCount = counted;
    const refuse = (error: string) => {
      file.stream.resume();
      file.stream.once('end', () => done(null, { result: { error } }));
    };
    if (counted > this.limits.maxFiles) return refuse(TOO_MANY_FILES);
    if (!(this.limits.mimeTypes ?? UPLOAD_MIME_TYPES).test(file.mimetype))
      return refuse(`Unsupported file type (${file.mimetype})`);
    // The store reads a pass-through: when it stops early (too large), the part itself is drained, not
    // destroyed, so the rest of the request still parses.
    const content = new PassThrough();
    file.stream.pipe(content);
    this.store
      .add(content, { maxBytes: this.limits.maxFileBytes })
      .then(async (stored) => {
        await this.catalog.save(stored, file.mimetype);
        done(null, { size: stored.size, result: { cid: stored.cid } });
      })
      .catch((error: unknown) => {
        const message =
          error instanceof ContentTooLargeError
            ? `File is larger than ${this.limits.maxFileBytes} bytes`
            : 'The file could not be stored';
        file.stream.unpipe(content);
        content.destroy();
        if (file.stream.readableEnded) done(null, { result: { error: message } });
        else refuse(message);
      });
  }

  _removeFile(_request: Request, _file: Express.Multer.File, done: (error: Error | null) => void): void {
    done(null);
  }
}

/** Multipart middleware for the upload routes: every file part, any field name, results in req.files. */
export function uploadMiddleware(store: ContentStore, catalog: AssetCatalog, limits: UploadLimits): RequestHandler {
  const parse = multer({
    storage: new ContentStoreEngine(store, catalog, limits),
    // Text fields are small (a schemaId per file at most).
    limits: { fields: Math.max(20, 2 * limits.maxFiles), fieldSize: 64 * 1024 },
  }).any();
  // A malformed body (cut short, no boundary, too many fields) is the client's problem: 400 naming it.
  return (request, response, next) =>
    parse(request, response, (error?: unknown) =>
      error === undefined
        ? next()
        : next(badRequest(`files: ${error instanceof Error ? error.message : 'malformed multipart/form-data body'}`)),
    );
}

/** The results of an upload request, in part order. */
export function uploadResults(request: Request): UploadResult[] {
  return ((request.files as Uploaded[] | undefined) ?? []).map((file) => file.result ?? { error: 'not stored' });
}

/** Asset types a note may attach (no Parquet files). */
export const NOTE_MIME_TYPES =
  /^(image\/(jpeg|png|svg\+xml|webp|gif)|video\/(mpeg|ogg|webm|h265|H265|mp4)|audio\/(mpeg|ogg|webm))$/;

/** Asset types a profile icon may have. */
export const ICON_MIME_TYPES = /^image\/(jpeg|png|svg\+xml|webp|gif)$/;

/** Parquet batch files (v3 batch announcements). */
export const BATCH_MIME_TYPES = /^application\/(vnd\.apache\.parquet|x-parquet)$/;
