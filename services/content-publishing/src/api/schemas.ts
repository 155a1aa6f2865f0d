import { msaIdText } from '@frequency-gateway/chain';
import { isDsnpContentHash, isDsnpContentUri, isDsnpUserUri, MAX_ANNOUNCED_USER_ID } from '@frequency-gateway/dsnp';
import { isCidV1 } from '@frequency-gateway/storage';
import { z } from 'zod';
import type { ContentBodies, ContentKind } from '../jobs/document.js';

/**
 * Request bodies of the content publishing api, with the field rules of the service interface and the
 * formats DSNP needs (content hashes and URIs, CIDv1, ISO 8601, emoji, durations). Unknown fields are
 * dropped; every problem is reported with its field path.
 */

const ISO_8601 =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2})(?::?(\d{2}))?)?)?$/;

/** A real calendar date, optionally with a time (T separator) and an offset. */
export function isIso8601(text: string): boolean {
  const match = ISO_8601.exec(text);
  if (!match) return false;
  const [year, month, day, hour, minute, second, offsetHours, offsetMinutes] = match
    .slice(1)
    .map((part) => (part === undefined ? 0 : Number(part)));
  const date = new Date(Date.UTC(year!, month! - 1, day!));
  return (
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === month! - 1 &&
    date.getUTCDate() === day &&
    hour! < 24 &&
    minute! < 60 &&
    second! < 60 &&
    offsetHours! < 24 &&
    offsetMinutes! < 60
  );
}

/** ISO 8601 durations such as PT10M32S or P1DT2H (no backtracking on hostile input). */
const DURATION = /^P(?=\d|T\d)(?:\d+Y)?(?:\d+M)?(?:\d+W)?(?:\d+D)?(?:T(?=\d)(?:\d+H)?(?:\d+M)?(?:\d+(?:\.\d+)?S)?)?$/;

/** One or more emoji code points (the ranges DSNP reactions use, with modifiers and joiners). */
const EMOJI = /^[\u{2000}-\u{2BFF}\u{E000}-\u{FFFF}\u{1F000}-\u{FFFFF}]+$/u;

/**
 * Checked by a refinement, not published as a JSON Schema `pattern`: patterns are ECMA-262 without the `u` flag,
 * and the astral ranges written with surrogate pairs match only in engines that count UTF-16 code units (a
 * Python or Go validator would refuse every valid emoji). The description states the rule instead.
 */
const emoji = () =>
  z
    .string()
    .refine((text) => EMOJI.test(text), 'must be one or more emoji')
    .meta({
      description:
        'One or more emoji: every code point in U+2000–U+2BFF, U+E000–U+FFFF or U+1F000–U+FFFFF (modifiers and joiners included)',
      example: '🤌🏼',
    });

const INTENT_NAME = /^[a-zA-Z][a-zA-Z0-9-]*[a-zA-Z0-9]\.[a-zA-Z][a-zA-Z0-9-]*[a-zA-Z0-9]$/;

export const iso8601 = () =>
  z.string().refine(isIso8601, 'must be an ISO 8601 date or date-time, such as 2024-05-01T12:00:00Z');

const nonEmpty = () => z.string().min(1, 'must not be empty');

const httpUrl = () =>
  z.string().refine((text) => {
    try {
      return ['http:', 'https:'].includes(new URL(text).protocol);
    } catch {
      return false;
    }
  }, 'must be an http or https URL');

/** Integers given as numbers or as digit strings (as HTML forms and some clients send them). */
const integer = (min: number, max: number, what: string) =>
  z.preprocess(
    (value) => (typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value),
    z
      .number({ error: `must be ${what}` })
      .int(`must be ${what}`)
      .min(min, `must be ${what}`)
      .max(max, `must be ${what}`),
  );

/**
 * The user a DSNP announcement is from. MSA ids are u64 on chain, but the announcement's batch file stores the id
 * (`fromId`) as a signed 64-bit integer: a larger one would fail the file, so it is refused here.
 */
const ANNOUNCED_USER_RULE = `must be at most ${MAX_ANNOUNCED_USER_ID} (the announcement file stores it as a signed 64-bit integer)`;

export const msaIdParam = z.object({
  msaId: msaIdText()
    .refine((msaId) => msaId <= MAX_ANNOUNCED_USER_ID, ANNOUNCED_USER_RULE)
    .meta({
      description: `MSA id of the user the content is from: 1 to ${MAX_ANNOUNCED_USER_ID} (the announcement file stores it as a signed 64-bit integer)`,
      example: '2',
    }),
});

export const schemaId = () =>
  integer(1, 65535, 'a schema id from 1 to 65535').meta({ description: 'Schema id', example: 16001 });

const dsnpContentHash = () =>
  z
    .string()
    .refine(isDsnpContentHash, 'must be a DSNP content hash (base32 multibase sha2-256 or blake3 multihash)')
    .meta({ example: 'bdyqdua4t4pxgy37mdmjyqv3dejp5betyqsznimpneyujsur23yubzna' });

const dsnpContentUri = () =>
  z
    .string()
    .refine(isDsnpContentUri, 'must be a DSNP content URI, dsnp://<msaId>/<contentHash>')
    .meta({ example: 'dsnp://78187493520/bdyqdua4t4pxgy37mdmjyqv3dejp5betyqsznimpneyujsur23yubzna' });

export const cidV1 = () =>
  z
    .string()
    .refine(isCidV1, 'must be a CIDv1')
    .meta({ example: 'bafybeifcdlhd3gu4ryvvzf74kefmsvxtfdmt7tn2qoq2xlkv3yr4fd62ce' });

export const AssetReference = z
  .object({
    referenceId: nonEmpty().meta({ description: 'CID of an asset uploaded through this service' }),
    height: integer(0, 2 ** 32, 'a whole number of pixels')
      .optional()
      .meta({ description: 'Rendering height hint' }),
    width: integer(0, 2 ** 32, 'a whole number of pixels')
      .optional()
      .meta({ description: 'Rendering width hint' }),
    duration: z
      .string()
      .regex(DURATION, 'must be an ISO 8601 duration such as PT10M32S')
      .optional()
      .meta({ description: 'Approximate duration of a video or audio asset' }),
  })
  .meta({ id: 'AssetReferenceDto' });

const uniqueReferences = (references: { referenceId: string }[] | undefined, context: z.RefinementCtx) => {
  const seen = new Set<string>();
  references?.forEach(({ referenceId }, index) => {
    if (seen.has(referenceId))
      context.addIssue({ code: 'custom', path: [index, 'referenceId'], message: 'is listed twice' });
    seen.add(referenceId);
  });
};

export const Asset = z
  .object({
    isLink: z.boolean().optional().meta({ description: 'A link (href) instead of uploaded files' }),
    references: z
      .array(AssetReference)
      .max(10, 'must list at most 10 references')
      .superRefine(uniqueReferences)
      .optional(),
    name: nonEmpty().optional().meta({ description: 'Display name' }),
    href: httpUrl().optional().meta({ description: 'URL of a link asset' }),
  })
  .superRefine((asset, context) => {
    if (asset.isLink === true) {
      if (asset.href === undefined)
        context.addIssue({ code: 'custom', path: ['href'], message: 'is required for a link' });
    } else if (!asset.references?.length) {
      context.addIssue({ code: 'custom', path: ['references'], message: 'must list at least one uploaded asset' });
    }
  })
  .meta({ id: 'AssetDto' });

export const Tag = z
  .object({
    type: z.enum(['mention', 'hashtag']).meta({ id: 'TagTypeEnum' }),
    name: nonEmpty().optional().meta({ description: 'Text of the tag (required for a hashtag)' }),
    mentionedId: z
      .string()
      .refine(isDsnpUserUri, 'must be a DSNP user URI, dsnp://<msaId>')
      .optional()
      .meta({ description: 'The mentioned user (required for a mention)', example: 'dsnp://78187493520' }),
  })
  .superRefine((tag, context) => {
    if (tag.type === 'hashtag' && tag.name === undefined)
      context.addIssue({ code: 'custom', path: ['name'], message: 'is required for a hashtag' });
    if (tag.type === 'mention' && tag.mentionedId === undefined)
      context.addIssue({ code: 'custom', path: ['mentionedId'], message: 'is required for a mention' });
  })
  .meta({ id: 'TagDto' });

export const Location = z
  .object({
    units: z.enum(['cm', 'm', 'km', 'inches', 'feet', 'miles']).optional().meta({ id: 'UnitTypeEnum' }),
    name: nonEmpty().meta({ description: 'Display name' }),
    accuracy: z.number().min(0, 'must be a percentage, 0 to 100').max(100, 'must be a percentage, 0 to 100').optional(),
    altitude: z.number().optional(),
    latitude: z.number().min(-90, 'must be from -90 to 90').max(90, 'must be from -90 to 90').optional(),
    longitude: z.number().min(-180, 'must be from -180 to 180').max(180, 'must be from -180 to 180').optional(),
    radius: z.number().min(0, 'must not be negative').optional(),
  })
  .meta({ id: 'LocationDto' });

const activityFields = {
  name: z.string().optional().meta({ description: 'Display name of the activity' }),
  tag: z.array(Tag).max(100, 'must list at most 100 tags').optional(),
  location: Location.optional(),
};

export const NoteActivity = z
  .object({
    content: nonEmpty().meta({ description: 'Text of the note' }),
    published: iso8601().meta({ description: 'Publishing time', example: '1970-01-01T00:00:00+00:00' }),
    assets: z.array(Asset).max(20, 'must list at most 20 assets').optional(),
    ...activityFields,
  })
  .meta({ id: 'NoteActivityDto' });

const announcementType = () => z.enum(['broadcast', 'reply']).meta({ id: 'ModifiableAnnouncementType' });

export const BroadcastDto = z.object({ content: NoteActivity }).meta({ id: 'BroadcastDto' });

export const ReplyDto = z
  .object({ inReplyTo: dsnpContentUri().meta({ description: 'The content replied to' }), content: NoteActivity })
  .meta({ id: 'ReplyDto' });

export const ReactionDto = z
  .object({
    emoji: emoji(),
    apply: integer(0, 255, 'an integer from 0 to 255').meta({
      description: 'Whether the reaction is applied (0 removes it) and at what strength',
    }),
    inReplyTo: dsnpContentUri().meta({ description: 'The content reacted to' }),
  })
  .meta({ id: 'ReactionDto' });

export const UpdateDto = z
  .object({
    targetAnnouncementType: announcementType(),
    targetContentHash: dsnpContentHash(),
    content: NoteActivity,
  })
  .meta({ id: 'UpdateDto' });

export const TombstoneDto = z
  .object({ targetAnnouncementType: announcementType(), targetContentHash: dsnpContentHash() })
  .meta({ id: 'TombstoneDto' });

export const ProfileDto = z
  .object({
    profile: z
      .object({
        icon: z.array(AssetReference).max(10, 'must list at most 10 icons').superRefine(uniqueReferences).optional(),
        summary: z.string().optional().meta({ description: 'Plain-text biography' }),
        published: iso8601().optional(),
        ...activityFields,
      })
      .meta({ id: 'ProfileActivityDto' }),
  })
  .meta({ id: 'ProfileDto' });

export const BatchFilesDto = z
  .object({
    batchFiles: z
      .array(
        z
          .object({
            schemaId: schemaId(),
            cid: cidV1().meta({ description: 'CIDv1 of a Parquet batch file in IPFS' }),
          })
          .meta({ id: 'BatchFileDto' }),
      )
      .min(1, 'must list at least one batch file')
      .max(100, 'must list at most 100 batch files'),
  })
  .meta({ id: 'BatchFilesDto' });

const onChainFields = {
  payload: z
    .string()
    .regex(/^0x([0-9a-fA-F]{2})+$/, 'must be 0x-prefixed hex of whole bytes')
    .meta({ description: "The message bytes in the schema's model, hex", example: '0x1122' }),
  published: iso8601().meta({ description: 'Publishing time' }),
  intentName: z
    .string()
    .regex(INTENT_NAME, 'must be an intent name, <namespace>.<name>')
    .optional()
    .meta({ description: 'Publish with the latest schema of this intent', example: 'dsnp.public-follows' }),
  schemaId: schemaId().optional(),
};

const eitherSchemaOrIntent = (
  body: { intentName?: string | undefined; schemaId?: number | undefined },
  context: z.RefinementCtx,
) => {
  if (body.intentName === undefined && body.schemaId === undefined)
    context.addIssue({ code: 'custom', path: ['schemaId'], message: 'is required when intentName is not given' });
};

export const OnChainContentDto = z
  .object(onChainFields)
  .superRefine(eitherSchemaOrIntent)
  .meta({ id: 'OnChainContentDto' });

/** A JSON number loses digits past 2^53 − 1: larger MSA ids (up to 2^64 − 1) must come as text. */
const ONCHAIN_NUMBER_RULE = `must be a positive integer, at most ${Number.MAX_SAFE_INTEGER} as a JSON number (send larger ids as text)`;

/** An MSA id as text (u64) or as a JSON number; a refusal names the rule of the form the client sent. */
const onChainMsaId = () =>
  z.union([msaIdText(), z.number().int(ONCHAIN_NUMBER_RULE).positive(ONCHAIN_NUMBER_RULE).transform(BigInt)], {
    // A union says only "Invalid input"; each form's own problem is among its issue's errors (text first).
    error: (issue) => {
      const errors = (issue as unknown as { errors?: { message: string }[][] }).errors;
      const form = typeof issue.input === 'string' ? 0 : typeof issue.input === 'number' ? 1 : undefined;
      return (
        (form === undefined ? undefined : errors?.[form]?.[0]?.message) ?? 'must be an MSA id, as text or a number'
      );
    },
  });

export const OnChainContentDtoV2 = z
  .object({
    ...onChainFields,
    msaId: onChainMsaId()
      .optional()
      .meta({ description: 'The user the content is published for; without it the provider publishes as itself' }),
  })
  .superRefine(eitherSchemaOrIntent)
  .meta({ id: 'OnChainContentDtoV2' });

export const AnnouncementResponseDto = z.object({ referenceId: z.string() }).meta({ id: 'AnnouncementResponseDto' });

/** The request body of each content kind; each schema's output is the body the document stage's contract takes. */
export const CONTENT_BODIES: { [Kind in ContentKind]: z.ZodType<ContentBodies[Kind]> } = {
  broadcast: BroadcastDto,
  reply: ReplyDto,
  reaction: ReactionDto,
  update: UpdateDto,
  tombstone: TombstoneDto,
  profile: ProfileDto,
};
