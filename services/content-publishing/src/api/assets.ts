import type { RedisClient } from '@frequency-gateway/platform';
import type { StoredContent } from '@frequency-gateway/storage';

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
    private readonly redis: RedisClient,
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

/** Asset types a note may attach (no Parquet files). */
export const NOTE_MIME_TYPES =
  /^(image\/(jpeg|png|svg\+xml|webp|gif)|video\/(mpeg|ogg|webm|h265|H265|mp4)|audio\/(mpeg|ogg|webm))$/;

/** Asset types a profile icon may have. */
export const ICON_MIME_TYPES = /^image\/(jpeg|png|svg\+xml|webp|gif)$/;

/** Parquet batch files (v3 batch announcements). */
export const BATCH_MIME_TYPES = /^application\/(vnd\.apache\.parquet|x-parquet)$/;
