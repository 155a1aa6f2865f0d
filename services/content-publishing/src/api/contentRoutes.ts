import type { DelegationGate } from '@frequency-gateway/chain';
import { badRequest, defineRoute, type Route } from '@frequency-gateway/platform';
import type { z } from 'zod';
import { CONTENT_PUBLISHING_QUEUES } from '../queues.js';
import {
  CONTENT_REQUEST_JOB,
  type AssetInfo,
  type ContentBodies,
  type ContentKind,
  type ContentRequestOf,
  type Note,
  INTENT_OF_KIND,
} from '../jobs/document.js';
import { ICON_MIME_TYPES, NOTE_MIME_TYPES, type AssetCatalog } from './assets.js';
import { checkSender, SENDER_RESPONSES } from './senders.js';
import type { Intake } from '@frequency-gateway/platform';
import {
  AnnouncementResponseDto,
  BroadcastDto,
  msaIdParam,
  ProfileDto,
  ReactionDto,
  ReplyDto,
  TombstoneDto,
  UpdateDto,
} from './schemas.js';

/** An asset a request refers to, where in the body it does, and the types allowed there. */
interface AssetUse {
  path: string;
  cid: string;
  allowed: RegExp;
}

function noteAssetUses(body: { content: Note }): AssetUse[] {
  return (body.content.assets ?? []).flatMap((asset, a) =>
    asset.isLink === true
      ? []
      : (asset.references ?? []).map((reference, r) => ({
          path: `body.content.assets.${a}.references.${r}.referenceId`,
          cid: reference.referenceId,
          allowed: NOTE_MIME_TYPES,
        })),
  );
}

function iconUses(body: ContentBodies['profile']): AssetUse[] {
  return (body.profile.icon ?? []).map((icon, i) => ({
    path: `body.profile.icon.${i}.referenceId`,
    cid: icon.referenceId,
    allowed: ICON_MIME_TYPES,
  }));
}

/**
 * Looks up every referenced asset: each must have been uploaded here and be of a type allowed where it is
 * used. All problems are reported at once (400); the found assets travel in the job.
 */
async function resolveAssets(catalog: AssetCatalog, uses: AssetUse[]): Promise<Record<string, AssetInfo>> {
  const found = await catalog.getMany(uses.map((use) => use.cid));
  const problems: string[] = [];
  const assets: Record<string, AssetInfo> = {};
  uses.forEach((use, index) => {
    const asset = found[index];
    if (!asset) problems.push(`${use.path}: no asset ${use.cid} was uploaded to this service`);
    else if (!use.allowed.test(asset.mimeType))
      problems.push(`${use.path}: asset ${use.cid} is ${asset.mimeType}, which is not allowed here`);
    else
      assets[asset.cid] = {
        cid: asset.cid,
        dsnpHash: asset.dsnpHash,
        mimeType: asset.mimeType,
        size: asset.size,
        type: asset.type,
      };
  });
  if (problems.length > 0) throw badRequest(problems);
  return assets;
}

interface ContentOperation<Kind extends ContentKind> {
  method: 'post' | 'put' | 'delete';
  path: string;
  operationId: string;
  summary: string;
  kind: Kind;
  /** The body's schema, whose output is a body of the kind as the document stage's job contract has it. */
  body: z.ZodType<ContentBodies[Kind]>;
  uses?(body: ContentBodies[Kind]): AssetUse[];
  deprecated?: boolean;
  /** The profile route answers 202 with no body. */
  noBody?: boolean;
}

const OPERATIONS: { [Kind in ContentKind]: ContentOperation<Kind> }[ContentKind][] = [
  {
    method: 'post',
    path: '/v1/content/{msaId}/broadcast',
    operationId: 'ContentControllerV1_broadcast_v1',
    summary: 'Publish a broadcast (a public note)',
    kind: 'broadcast',
    body: BroadcastDto,
    uses: noteAssetUses,
  },
  {
    method: 'post',
    path: '/v1/content/{msaId}/reply',
    operationId: 'ContentControllerV1_reply_v1',
    summary: 'Publish a reply to a piece of content',
    kind: 'reply',
    body: ReplyDto,
    uses: noteAssetUses,
  },
  {
    method: 'post',
    path: '/v1/content/{msaId}/reaction',
    operationId: 'ContentControllerV1_reaction_v1',
    summary: 'Publish a reaction (an emoji) to a piece of content',
    kind: 'reaction',
    body: ReactionDto,
  },
  {
    method: 'put',
    path: '/v1/content/{msaId}',
    operationId: 'ContentControllerV1_update_v1',
    summary: 'Publish a new version of a broadcast or reply',
    kind: 'update',
    body: UpdateDto,
    uses: noteAssetUses,
  },
  {
    method: 'delete',
    path: '/v1/content/{msaId}',
    operationId: 'ContentControllerV1_delete_v1',
    summary: 'Retract a broadcast or reply (deprecated: use POST /v2/content/{msaId}/tombstones)',
    kind: 'tombstone',
    body: TombstoneDto,
    deprecated: true,
  },
  {
    method: 'post',
    path: '/v2/content/{msaId}/tombstones',
    operationId: 'ContentControllerV2_postTombstone_v2',
    summary: 'Retract a broadcast or reply (a tombstone)',
    kind: 'tombstone',
    body: TombstoneDto,
  },
  {
    method: 'put',
    path: '/v1/profile/{msaId}',
    operationId: 'ProfileControllerV1_profile_v1',
    summary: "Publish the user's profile",
    kind: 'profile',
    body: ProfileDto,
    uses: iconUses,
    noBody: true,
  },
];

/**
 * The DSNP content routes. Each validates its body, checks the assets it references, and queues one
 * request for the worker, answering 202 with the request's referenceId once the job is in Redis.
 */
export function contentRoutes(intake: Intake, catalog: AssetCatalog, gate: DelegationGate): Route[] {
  return OPERATIONS.map((operation) => contentRoute(intake, catalog, gate, operation));
}

function contentRoute<Kind extends ContentKind>(
  intake: Intake,
  catalog: AssetCatalog,
  gate: DelegationGate,
  operation: ContentOperation<Kind>,
): Route {
  return defineRoute({
    method: operation.method,
    path: operation.path,
    operationId: operation.operationId,
    summary: operation.summary,
    description:
      'Accepted requests are published asynchronously: follow them at GET /v1/requests/{referenceId}. The same request posted again gets the same referenceId and is not published twice.',
    tags: [operation.kind === 'profile' ? 'profile' : 'content'],
    ...(operation.deprecated ? { deprecated: true } : {}),
    params: msaIdParam,
    body: operation.body,
    responses: {
      202: operation.noBody
        ? { description: 'Accepted; the referenceId is in the Location header' }
        : { description: 'Accepted', schema: AnnouncementResponseDto },
      ...SENDER_RESPONSES,
      400: {
        description:
          'A field is missing or malformed, a referenced asset is unknown or of the wrong type, or the user (msaId) has no MSA',
      },
      503: { description: 'The request could not be queued, or the chain is not reachable; nothing was accepted' },
    },
    handler: async ({ params, body }) => {
      await checkSender(gate, 'params.msaId', params.msaId, INTENT_OF_KIND[operation.kind]);
      const assets = operation.uses ? await resolveAssets(catalog, operation.uses(body)) : {};
      const msaId = params.msaId.toString();
      const { referenceId } = await intake.accept<ContentRequestOf<Kind>>({
        kind: operation.kind,
        identity: { msaId, body },
        details: { msaId },
        queue: CONTENT_PUBLISHING_QUEUES.request,
        jobName: CONTENT_REQUEST_JOB,
        job: (id) => ({
          referenceId: id,
          kind: operation.kind,
          msaId,
          body,
          assets,
          acceptedAt: new Date().toISOString(),
        }),
      });
      return operation.noBody
        ? { status: 202, headers: { location: `/v1/requests/${referenceId}` } }
        : { status: 202, body: { referenceId } };
    },
  });
}
