import { AnnouncementType, INTENT_OF_ANNOUNCEMENT } from '@frequency-gateway/dsnp';

/**
 * The document stage's job contract: what the api puts on requestQueue (through the intake) and the stage takes
 * off it. The api validates the bodies with its own schemas, whose output must fit these types (it is checked
 * where the api declares its routes); the worker reads them as this contract says, never the api's schemas.
 * The stages' contracts live here in src/jobs/, beside the api and the worker: both use them, neither imports
 * the other.
 */

/** The DSNP announcement kinds a content request can make. */
export type ContentKind = 'broadcast' | 'reply' | 'reaction' | 'update' | 'tombstone' | 'profile';

/** The intent (schema name) each kind's announcements are published under. */
export const INTENT_OF_KIND: Record<ContentKind, string> = {
  broadcast: INTENT_OF_ANNOUNCEMENT[AnnouncementType.Broadcast],
  reply: INTENT_OF_ANNOUNCEMENT[AnnouncementType.Reply],
  reaction: INTENT_OF_ANNOUNCEMENT[AnnouncementType.Reaction],
  update: INTENT_OF_ANNOUNCEMENT[AnnouncementType.Update],
  tombstone: INTENT_OF_ANNOUNCEMENT[AnnouncementType.Tombstone],
  profile: INTENT_OF_ANNOUNCEMENT[AnnouncementType.Profile],
};

/** requestQueue's one job name. */
export const CONTENT_REQUEST_JOB = 'content';

/** An uploaded asset as the api found it in the catalog when the request was accepted. */
export interface AssetInfo {
  cid: string;
  dsnpHash: string;
  mimeType: string;
  size: number;
  type: 'image' | 'video' | 'audio' | 'parquet';
}

/** An uploaded asset a note or profile refers to (by CID), with rendering hints. */
export interface AssetReference {
  referenceId: string;
  height?: number | undefined;
  width?: number | undefined;
  /** ISO 8601 duration of a video or audio asset. */
  duration?: string | undefined;
}

/** An asset of a note: a link, or uploaded files. */
export interface NoteAsset {
  isLink?: boolean | undefined;
  references?: AssetReference[] | undefined;
  name?: string | undefined;
  href?: string | undefined;
}

export interface Tag {
  type: 'mention' | 'hashtag';
  name?: string | undefined;
  /** A mention's DSNP user URI. */
  mentionedId?: string | undefined;
}

export interface Location {
  name: string;
  units?: 'cm' | 'm' | 'km' | 'inches' | 'feet' | 'miles' | undefined;
  accuracy?: number | undefined;
  altitude?: number | undefined;
  latitude?: number | undefined;
  longitude?: number | undefined;
  radius?: number | undefined;
}

/** The note of a broadcast, reply or update. */
export interface Note {
  content: string;
  /** ISO 8601. */
  published: string;
  name?: string | undefined;
  assets?: NoteAsset[] | undefined;
  tag?: Tag[] | undefined;
  location?: Location | undefined;
}

type ModifiableType = 'broadcast' | 'reply';

/** The validated body of each kind of request, unknown fields dropped. */
export interface ContentBodies {
  broadcast: { content: Note };
  reply: { inReplyTo: string; content: Note };
  reaction: { emoji: string; apply: number; inReplyTo: string };
  update: { targetAnnouncementType: ModifiableType; targetContentHash: string; content: Note };
  tombstone: { targetAnnouncementType: ModifiableType; targetContentHash: string };
  profile: {
    profile: {
      icon?: AssetReference[] | undefined;
      summary?: string | undefined;
      published?: string | undefined;
      name?: string | undefined;
      tag?: Tag[] | undefined;
      location?: Location | undefined;
    };
  };
}

/** A request of one kind: its id (also the job id), the user, the body and every asset the body refers to. */
export interface ContentRequestOf<Kind extends ContentKind> {
  referenceId: string;
  kind: Kind;
  /** The user the content is from (decimal MSA id). */
  msaId: string;
  body: ContentBodies[Kind];
  /** Every asset the body references, by CID. */
  assets: Record<string, AssetInfo>;
  /** When the api accepted it: a request accepted again (after it failed) is another acceptance. */
  acceptedAt: string;
}

/** requestQueue job `content`: a DSNP announcement to build and batch. */
export type ContentRequestJob = { [Kind in ContentKind]: ContentRequestOf<Kind> }[ContentKind];
