import {
  AnnouncementType,
  buildNote,
  buildProfile,
  type AssetLink,
  type AttachmentInput,
  type TagInput,
} from '@frequency-gateway/dsnp';
import { contentId, dsnpHash, publicUrl } from '@frequency-gateway/storage';
import type { AssetInfo, AssetReference, ContentRequestJob, ContentRequestOf, Note, Tag } from '../../jobs/document.js';
import type { Announcement } from '../../jobs/batch.js';

const TARGET_TYPE = { broadcast: AnnouncementType.Broadcast, reply: AnnouncementType.Reply } as const;

/** Thrown when a job names an asset it does not carry (a job from an incompatible api version). */
export class MissingAssetError extends Error {
  constructor(cid: string) {
    super(`the request refers to asset ${cid}, which its job does not describe`);
    this.name = 'MissingAssetError';
  }
}

/**
 * Turns an accepted request into its DSNP announcement. Broadcasts, replies, updates and profiles also get
 * their ActivityStreams document: the announcement carries its URL and DSNP content hash, and the document
 * travels with the row until its batch stores it in IPFS. Every step is deterministic, so a retried job
 * makes the same document, CID and row.
 */
export class ContentBuilder {
  constructor(
    /** IPFS_GATEWAY_URL: where the documents and assets are publicly readable. */
    private readonly gatewayTemplate: string,
  ) {}

  async build(job: ContentRequestJob): Promise<Announcement> {
    const fromId = job.msaId;
    switch (job.kind) {
      case 'broadcast': {
        const { body } = job;
        const { address, document } = await this.addressed(this.note(body.content, job));
        return { row: { announcementType: AnnouncementType.Broadcast, fromId, ...address }, document };
      }
      case 'reply': {
        const { body } = job;
        const { address, document } = await this.addressed(this.note(body.content, job));
        return {
          row: { announcementType: AnnouncementType.Reply, fromId, ...address, inReplyTo: body.inReplyTo },
          document,
        };
      }
      case 'update': {
        const { body } = job;
        const { address, document } = await this.addressed(this.note(body.content, job));
        return {
          row: {
            announcementType: AnnouncementType.Update,
            fromId,
            ...address,
            targetAnnouncementType: TARGET_TYPE[body.targetAnnouncementType],
            targetContentHash: body.targetContentHash,
          },
          document,
        };
      }
      case 'profile': {
        const { body } = job;
        const { address, document } = await this.addressed(this.profile(body, job));
        return { row: { announcementType: AnnouncementType.Profile, fromId, ...address }, document };
      }
      case 'reaction': {
        const { body } = job;
        return {
          row: {
            announcementType: AnnouncementType.Reaction,
            fromId,
            emoji: body.emoji,
            apply: body.apply,
            inReplyTo: body.inReplyTo,
          },
        };
      }
      case 'tombstone': {
        const { body } = job;
        return {
          row: {
            announcementType: AnnouncementType.Tombstone,
            fromId,
            targetAnnouncementType: TARGET_TYPE[body.targetAnnouncementType],
            targetContentHash: body.targetContentHash,
          },
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

  private note(note: Note, job: ContentRequestJob): object {
    return buildNote({
      content: note.content,
      published: new Date(note.published).toISOString(),
      ...(note.name === undefined ? {} : { name: note.name }),
      attachments: this.attachments(note, job.assets),
      tags: tags(note.tag),
      ...(note.location ? { location: note.location } : {}),
    });
  }

  private profile(body: ContentRequestOf<'profile'>['body'], job: ContentRequestJob): object {
    const { profile } = body;
    return buildProfile({
      ...(profile.name === undefined ? {} : { name: profile.name }),
      ...(profile.summary === undefined ? {} : { summary: profile.summary }),
      ...(profile.published === undefined ? {} : { published: new Date(profile.published).toISOString() }),
      icon: (profile.icon ?? []).map((icon) => this.link(icon, job.assets).link),
      tags: tags(profile.tag),
      ...(profile.location ? { location: profile.location } : {}),
    });
  }

  /**
   * The document's exact text and where it will be: the announcement points at it by URL (its CID, worked
   * out here) and by the DSNP hash of its bytes. It is stored with its batch, before the batch file.
   */
  private async addressed(
    document: object,
  ): Promise<{ address: { contentHash: string; url: string }; document: string }> {
    const text = JSON.stringify(document);
    const bytes = new TextEncoder().encode(text);
    const cid = await contentId(bytes);
    return { address: { contentHash: dsnpHash(bytes), url: publicUrl(this.gatewayTemplate, cid) }, document: text };
  }
}

function tags(input: Tag[] | undefined): TagInput[] {
  return (input ?? []).map((tag) =>
    tag.type === 'hashtag'
      ? { type: 'hashtag', name: tag.name as string }
      : { type: 'mention', id: tag.mentionedId as string, ...(tag.name === undefined ? {} : { name: tag.name }) },
  );
}
