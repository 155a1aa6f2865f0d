/** DSNP announcement types, by their DSNP ids. */
export enum AnnouncementType {
  Tombstone = 0,
  Broadcast = 2,
  Reply = 3,
  Reaction = 4,
  Profile = 5,
  Update = 6,
}

/** The Frequency intent (schema name) that carries each announcement type's batch files. */
export const INTENT_OF_ANNOUNCEMENT: Record<AnnouncementType, string> = {
  [AnnouncementType.Tombstone]: 'dsnp.tombstone',
  [AnnouncementType.Broadcast]: 'dsnp.broadcast',
  [AnnouncementType.Reply]: 'dsnp.reply',
  [AnnouncementType.Reaction]: 'dsnp.reaction',
  [AnnouncementType.Profile]: 'dsnp.profile',
  [AnnouncementType.Update]: 'dsnp.update',
};

/** The announcement rows of DSNP batch files (column names as in the DSNP Parquet models). */
export interface TombstoneAnnouncement {
  announcementType: AnnouncementType.Tombstone;
  fromId: bigint;
  targetAnnouncementType: AnnouncementType;
  targetContentHash: string;
}

export interface BroadcastAnnouncement {
  announcementType: AnnouncementType.Broadcast;
  fromId: bigint;
  contentHash: string;
  url: string;
}

export interface ReplyAnnouncement {
  announcementType: AnnouncementType.Reply;
  fromId: bigint;
  contentHash: string;
  inReplyTo: string;
  url: string;
}

export interface ReactionAnnouncement {
  announcementType: AnnouncementType.Reaction;
  fromId: bigint;
  emoji: string;
  apply: number;
  inReplyTo: string;
}

export interface ProfileAnnouncement {
  announcementType: AnnouncementType.Profile;
  fromId: bigint;
  contentHash: string;
  url: string;
}

export interface UpdateAnnouncement {
  announcementType: AnnouncementType.Update;
  fromId: bigint;
  contentHash: string;
  url: string;
  targetAnnouncementType: AnnouncementType;
  targetContentHash: string;
}

export type Announcement =
  | TombstoneAnnouncement
  | BroadcastAnnouncement
  | ReplyAnnouncement
  | ReactionAnnouncement
  | ProfileAnnouncement
  | UpdateAnnouncement;
