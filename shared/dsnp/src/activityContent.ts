import activityContent from '@dsnp/activity-content';
import type {
  ActivityContentAttachment,
  ActivityContentLocation,
  ActivityContentNote,
  ActivityContentProfile,
  ActivityContentTag,
} from '@dsnp/activity-content/types';

export type { ActivityContentNote, ActivityContentProfile };

const CONTEXT = 'https://www.w3.org/ns/activitystreams';

/** A stored asset as an attachment link: its URL, MIME type, DSNP hash and, for images and video, size. */
export interface AssetLink {
  href: string;
  /** A MIME type string, e.g. "image/png". */
  mediaType: string;
  /** DSNP content hash of the asset's own bytes. */
  hash: string;
  width?: number;
  height?: number;
}

export type AttachmentInput =
  | { type: 'image'; name?: string; links: AssetLink[] }
  | { type: 'video'; name?: string; duration?: string; links: AssetLink[] }
  | { type: 'audio'; name?: string; duration?: string; links: AssetLink[] }
  | { type: 'link'; href: string; name?: string };

export type TagInput = { type: 'hashtag'; name: string } | { type: 'mention'; id: string; name?: string };

export interface LocationInput {
  name: string;
  accuracy?: number;
  altitude?: number;
  latitude?: number;
  longitude?: number;
  radius?: number;
  units?: string;
}

export interface NoteInput {
  content: string;
  /** ISO 8601 date-time. */
  published: string;
  name?: string;
  attachments?: AttachmentInput[];
  tags?: TagInput[];
  location?: LocationInput;
}

export interface ProfileInput {
  name?: string;
  summary?: string;
  published?: string;
  icon?: AssetLink[];
  tags?: TagInput[];
  location?: LocationInput;
}

export class InvalidActivityContentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidActivityContentError';
  }
}

/** Drops keys whose value is undefined, so optional fields are absent rather than null. */
const defined = <T extends object>(value: T): T =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;

const link = (asset: AssetLink) =>
  defined({
    type: 'Link' as const,
    href: asset.href,
    mediaType: asset.mediaType,
    hash: [asset.hash],
    width: asset.width,
    height: asset.height,
  });

function attachment(input: AttachmentInput): ActivityContentAttachment {
  switch (input.type) {
    case 'image':
      return defined({ type: 'Image', name: input.name, url: input.links.map(link) });
    case 'video':
      return defined({ type: 'Video', name: input.name, duration: input.duration, url: input.links.map(link) });
    case 'audio':
      return defined({
        type: 'Audio',
        name: input.name,
        duration: input.duration,
        url: input.links.map(({ width: _w, height: _h, ...rest }) => link(rest)),
      });
    case 'link':
      return defined({ type: 'Link', href: input.href, name: input.name });
  }
}

const tag = (input: TagInput): ActivityContentTag =>
  input.type === 'hashtag' ? { name: input.name } : defined({ type: 'Mention', id: input.id, name: input.name });

const location = (input: LocationInput | undefined): ActivityContentLocation | undefined =>
  input && defined({ type: 'Place' as const, ...input });

/** The tags and location both document types share (absent when not given). */
const tagsAndPlace = (input: { tags?: TagInput[]; location?: LocationInput }) => ({
  tag: input.tags?.length ? input.tags.map(tag) : undefined,
  location: location(input.location),
});

/** Checks with the DSNP activity-content rules; throws InvalidActivityContentError naming the problem. */
function validated<T>(value: T, check: (value: unknown) => boolean): T {
  try {
    check(value);
  } catch (error) {
    throw new InvalidActivityContentError((error as Error).message);
  }
  return value;
}

/** An ActivityStreams Note as DSNP broadcasts, replies and updates carry it. */
export function buildNote(input: NoteInput): ActivityContentNote {
  const note = defined({
    '@context': CONTEXT,
    type: 'Note',
    mediaType: 'text/plain',
    content: input.content,
    published: input.published,
    name: input.name,
    attachment: input.attachments?.length ? input.attachments.map(attachment) : undefined,
    ...tagsAndPlace(input),
  }) as ActivityContentNote;
  // The library's Note check reads `tag` as a single tag (its Profile check handles arrays), so tags are
  // checked one by one here and the rest of the Note by the library.
  const { tag: tags, ...untagged } = note;
  validated(untagged, activityContent.validation.requireValidActivityContentNote);
  for (const tag of (tags as ActivityContentTag[] | undefined) ?? []) checkTag(tag);
  return note;
}

function checkTag(tag: ActivityContentTag): void {
  if ('type' in tag && tag.type === 'Mention') {
    if (!activityContent.validation.isDSNPUserURI(tag.id))
      throw new InvalidActivityContentError(`ActivityContentMention id ${String(tag.id)} is not a DSNP user URI`);
    if (tag.name !== undefined && typeof tag.name !== 'string')
      throw new InvalidActivityContentError('ActivityContentMention name is not a string');
  } else if (typeof tag.name !== 'string' || tag.name.length === 0) {
    throw new InvalidActivityContentError('ActivityContentHashtag name is not a string');
  }
}

/** An ActivityStreams Profile for DSNP profile announcements. */
export function buildProfile(input: ProfileInput): ActivityContentProfile {
  const profile = defined({
    '@context': CONTEXT,
    type: 'Profile',
    name: input.name,
    summary: input.summary,
    published: input.published,
    icon: input.icon?.length ? input.icon.map(link) : undefined,
    ...tagsAndPlace(input),
  }) as ActivityContentProfile;
  return validated(profile, activityContent.validation.requireValidActivityContentProfile);
}
