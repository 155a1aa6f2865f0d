import { AnnouncementType } from '@frequency-gateway/dsnp';
import { deliveredWebhookSpec } from '@frequency-gateway/webhooks';
import { z } from 'zod';
import type { AnnouncementTypeName } from './registrations.js';

/** The name a webhook is registered under, by DSNP announcement type. */
export const TYPE_NAMES: Record<AnnouncementType, AnnouncementTypeName> = {
  [AnnouncementType.Tombstone]: 'tombstone',
  [AnnouncementType.Broadcast]: 'broadcast',
  [AnnouncementType.Reply]: 'reply',
  [AnnouncementType.Reaction]: 'reaction',
  [AnnouncementType.Profile]: 'profile',
  [AnnouncementType.Update]: 'update',
};

/** The columns each announcement type carries besides announcementType and fromId. */
const FIELDS: Record<AnnouncementType, readonly string[]> = {
  [AnnouncementType.Tombstone]: ['targetAnnouncementType', 'targetContentHash'],
  [AnnouncementType.Broadcast]: ['contentHash', 'url'],
  [AnnouncementType.Reply]: ['contentHash', 'inReplyTo', 'url'],
  [AnnouncementType.Reaction]: ['emoji', 'apply', 'inReplyTo'],
  [AnnouncementType.Profile]: ['contentHash', 'url'],
  [AnnouncementType.Update]: ['contentHash', 'url', 'targetAnnouncementType', 'targetContentHash'],
};

const NUMERIC = new Set(['apply', 'targetAnnouncementType']);

const text = (value: unknown) =>
  value instanceof Uint8Array
    ? Buffer.from(value).toString()
    : typeof value === 'bigint'
      ? value.toString()
      : String(value);

export type WebhookAnnouncement = { announcementType: AnnouncementType; fromId: string } & Record<string, unknown>;

/**
 * A batch file row as the webhook carries it: its type's columns, `fromId` a decimal string, numbers as numbers.
 * Undefined for a row that is no DSNP announcement (another file, or a type the watcher does not know).
 */
export function announcementOf(row: Record<string, unknown>): WebhookAnnouncement | undefined {
  const type = Number(row.announcementType) as AnnouncementType;
  const fields = FIELDS[type];
  if (!fields || row.fromId === undefined || row.fromId === null) return undefined;
  const announcement: WebhookAnnouncement = { announcementType: type, fromId: text(row.fromId) };
  for (const field of fields) {
    const value = row[field];
    if (value === undefined || value === null) return undefined;
    announcement[field] = NUMERIC.has(field) ? Number(value) : text(value);
  }
  return announcement;
}

const announcementSchema = z
  .object({
    announcementType: z
      .number()
      .int()
      .meta({ description: 'DSNP type: 0 tombstone, 2 broadcast, 3 reply, 4 reaction, 5 profile, 6 update' }),
    fromId: z.string().meta({ description: 'MSA id of the author, decimal' }),
    contentHash: z.string().optional(),
    url: z.string().optional(),
    inReplyTo: z.string().optional().meta({ description: 'DSNP content URI answered (reply, reaction)' }),
    emoji: z.string().optional(),
    apply: z.number().int().optional().meta({ description: 'Reaction: 1 applies, 0 removes' }),
    targetAnnouncementType: z.number().int().optional(),
    targetContentHash: z.string().optional(),
  })
  .meta({ id: 'Announcement' });

const onChainMessage = z
  .object({
    msaId: z.string().meta({ description: 'The user the message is for (or the provider, for its own)' }),
    providerId: z.string().meta({ description: 'The provider that sent it' }),
    payload: z.string().meta({ description: 'The payload as stored, hex' }),
    decoded: z
      .unknown()
      .optional()
      .meta({ description: "The payload read with the schema's Avro model (bytes as hex), when it has one" }),
  })
  .meta({ id: 'OnChainMessage' });

export const announcementPayload = z
  .object({
    blockNumber: z.number().int().meta({ description: 'The block whose message carried the announcement' }),
    schemaId: z.number().int().meta({ description: 'Schema of the message' }),
    intentId: z.number().int().meta({ description: 'Intent of the message' }),
    requestId: z.string().optional().meta({ description: 'The search that found it (search results only)' }),
    webhookUrl: z.string().optional().meta({ description: 'The search webhook (search results only)' }),
    announcement: announcementSchema.optional().meta({ description: 'A DSNP announcement from a batch file' }),
    message: onChainMessage.optional().meta({ description: 'An on-chain message (webhooks registered for onChain)' }),
  })
  .meta({ id: 'AnnouncementResponse' });

export type AnnouncementPayload = z.infer<typeof announcementPayload>;

export const announcementWebhook = deliveredWebhookSpec({
  name: 'announcement',
  operationId: 'announcementNotify',
  summary: 'POST {registered url}: one DSNP announcement (or on-chain message) found on chain',
  sentWhen: 'Sent once per announcement and registered URL (or per search, to its webhookUrl)',
  body: announcementPayload,
});
