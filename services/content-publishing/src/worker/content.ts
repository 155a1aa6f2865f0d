import {
  AnnouncementType,
  buildNote,
  buildProfile,
  type AssetLink,
  type AttachmentInput,
  type LocationInput,
  type TagInput,
} from '@frequency-gateway/dsnp';
import { publicUrl, type ContentStore } from '@frequency-gateway/storage';
import type { z } from 'zod';
import type {
  BroadcastDto,
  NoteActivity,
  ProfileDto,
  ReactionDto,
  ReplyDto,
  TombstoneDto,
  UpdateDto,
} from '../api/schemas.js';
import type { AssetInfo, ContentKind, ContentRequestJob } from '../jobs.js';

/**
 * One announcement row as it waits in a batch: JSON-safe (the user id as decimal text), with the column names
 * of the DSNP Parquet models. `toParquetRow` gives the values the writer takes.
 */
export type AnnouncementRow = {
  announcementType: AnnouncementType;
  fromId: string;
} & Record<string, string | number>;

export const ANNOUNCEMENT_OF_KIND: Record<ContentKind, AnnouncementType> = {
  broadcast: AnnouncementType.Broadcast,
  reply: AnnouncementType.Reply,
  reaction: AnnouncementType.Reaction,
  update: AnnouncementType.Update,
  tombstone: AnnouncementType.Tombstone,
  profile: AnnouncementType.Profile,
};

const TARGET_TYPE = { broadcast: AnnouncementType.Broadcast, reply: AnnouncementType.Reply } as const;

export function toParquetRow(row: AnnouncementRow): Record<string, unknown> {
  return { ...row, fromId: BigInt(row.fromId) };
}

type Note = z.output<typeof NoteActivity>;
type AssetReference = NonNullable<NonNullable<Note['assets']>[number]['references']>[number];

/** Thrown when a job names an asset it does not carry (a job from an incompatible api version). */
export class MissingAssetError extends Error {
  constructor(cid: string) {
    super(`the request refers to asset ${cid}, which its job does not describe`);
    this.name = 'MissingAssetError';
  }
}

/**
 * Turns an accepted request into its DSNP announcement. Broadcasts, replies, updates and profiles first get
 * their ActivityStreams document, stored in IPFS: the announcement carries its URL and DSNP content hash.
 * Every step is deterministic, so a retried job makes the same document, CID and row.
 */
export class ContentBuilder {
  constructor(
    private readonly store: ContentStore,
    /** IPFS_GATEWAY_URL: where the documents and assets are publicly readable. */
    private readonly gatewayTemplate: string,
  ) {}

  async build(job: ContentRequestJob): Promise<AnnouncementRow> {
    const fromId = job.msaId;
    switch (job.kind) {
      case 'broadcast': {
        const body = job.body as z.output<typeof BroadcastDto>;
        return { announcementType: AnnouncementType.Broadcast, fromId, ...(await this.note(body.content, job)) };
      }
      case 'reply': {
        const body = job.body as z.output<typeof ReplyDto>;
        const document = await this.note(body.content, job);
        return { announcementType: AnnouncementType.Reply, fromId, ...document, inReplyTo: body.inReplyTo };
      }
      case 'update': {
        const body = job.body as z.output<typeof UpdateDto>;
        return {
          announcementType: AnnouncementType.Update,
          fromId,
          ...(await this.note(body.content, job)),
          targetAnnouncementType: TARGET_TYPE[body.targetAnnouncementType],
          targetContentHash: body.targetContentHash,
        };
      }
      case 'profile': {
        const body = job.body as z.output<typeof ProfileDto>;
        return { announcementType: AnnouncementType.Profile, fromId, ...(await this.profile(body, job)) };
      }
      case 'reaction': {
        const body = job.body as z.output<typeof ReactionDto>;
        return {
          announcementType: AnnouncementType.Reaction,
          fromId,
          emoji: body.emoji,
          apply: body.apply,
          inReplyTo: body.inReplyTo,
        };
      }
      case 'tombstone': {
        const body = job.body as z.output<typeof TombstoneDto>;
        return {
          announcementType: AnnouncementType.Tombstone,
          fromId,
          targetAnnouncementType: TARGET_TYPE[body.targetAnnouncementType],
          targetContentHash: body.targetContentHash,
        };
      }
    }
  }

  private link(reference: AssetReference, assets: Record<string, AssetInfo>): { type: string; link: AssetLink } {
    const asset = assets[reference.referenceId];
    if (!asset) throw new MissingAssetError(reference.referenceId);
    const link: AssetLink = {
      href: publicUrl(this.gatewayTemplate, asset.cid),
      mediaType: asset.mimeType,
      hash: asset.dsnpHash,
      ...(reference.width === undefined ? {} : { width: reference.width }),
      ...(reference.height === undefined ? {} : { height: reference.height }),
    };
    return { type: asset.type, link };
  }

  /**
   * An asset of the request becomes attachments: a link stays a link; uploaded files become one attachment
   * per media type (image, video, audio), each listing its files with their own MIME type and hash.
   */
  private attachments(note: Note, assets: Record<string, AssetInfo>): AttachmentInput[] {
    return (note.assets ?? []).flatMap((asset): AttachmentInput[] => {
      if (asset.isLink === true)
        return [{ type: 'link', href: asset.href as string, ...(asset.name ? { name: asset.name } : {}) }];
      const byType = new Map<string, { links: AssetLink[]; duration?: string }>();
      for (const reference of asset.references ?? []) {
        const { type, link } = this.link(reference, assets);
        const group = byType.get(type) ?? { links: [] };
        group.links.push(link);
        group.duration ??= reference.duration;
        byType.set(type, group);
      }
      return [...byType].map(([type, group]) => {
        const name = asset.name ? { name: asset.name } : {};
        if (type === 'image') return { type: 'image', ...name, links: group.links };
        const duration = group.duration === undefined ? {} : { duration: group.duration };
        return { type: type as 'video' | 'audio', ...name, ...duration, links: group.links };
      });
    });
  }

  private async note(note: Note, job: ContentRequestJob) {
    const document = buildNote({
      content: note.content,
      published: new Date(note.published).toISOString(),
      ...(note.name === undefined ? {} : { name: note.name }),
      attachments: this.attachments(note, job.assets),
      tags: tags(note.tag),
      ...(note.location ? { location: note.location as LocationInput } : {}),
    });
    return this.stored(document);
  }

  private async profile(body: z.output<typeof ProfileDto>, job: ContentRequestJob) {
    const { profile } = body;
    const document = buildProfile({
      ...(profile.name === undefined ? {} : { name: profile.name }),
      ...(profile.summary === undefined ? {} : { summary: profile.summary }),
      ...(profile.published === undefined ? {} : { published: new Date(profile.published).toISOString() }),
      icon: (profile.icon ?? []).map((icon) => this.link(icon, job.assets).link),
      tags: tags(profile.tag),
      ...(profile.location ? { location: profile.location as LocationInput } : {}),
    });
    return this.stored(document);
  }

  /** Stores a document; the announcement points at it by URL and DSNP hash of its exact bytes. */
  private async stored(document: object): Promise<{ contentHash: string; url: string }> {
    // Adding keeps it: Kubo pins what it adds, the embedded store never collects.
    const stored = await this.store.add(new TextEncoder().encode(JSON.stringify(document)));
    return { contentHash: stored.dsnpHash, url: publicUrl(this.gatewayTemplate, stored.cid) };
  }
}

function tags(input: Note['tag']): TagInput[] {
  return (input ?? []).map((tag) =>
    tag.type === 'hashtag'
      ? { type: 'hashtag', name: tag.name as string }
      : { type: 'mention', id: tag.mentionedId as string, ...(tag.name === undefined ? {} : { name: tag.name }) },
  );
}
