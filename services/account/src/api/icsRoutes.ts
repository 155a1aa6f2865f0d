import {
  accountCalls,
  chainTypeOf,
  eip712ChainIdOf,
  fromChain,
  SignedPayloads,
  type ChainCall,
} from '@frequency-gateway/chain';
import { badRequest, type Route } from '@frequency-gateway/platform';
import { z } from 'zod';
import { accountIdParam } from './accountRoutes.js';
import { writeRoute, type WriteRouteOptions } from './writes.js';
import { blockNumber, hexBytes, itemActionsCall, itemActionsRequest } from './keyAgreementRoutes.js';
import { passedExpiration, proofSchema, queueTransaction, verifiedProof } from './writes.js';

const pageUpsertRequest = z
  .object({
    accountId: accountIdParam.meta({ description: 'The account that signed (the path account)' }),
    signature: proofSchema,
    payload: z
      .object({
        schemaId: z.number().int().min(1).max(65535),
        pageId: z.number().int().min(0).max(65535),
        targetHash: blockNumber.meta({ description: 'The content hash of the page replaced (0 for a new page)' }),
        expiration: blockNumber,
        payload: hexBytes(1024).meta({ description: 'The page, hex' }),
      })
      .meta({ id: 'UpsertedPageDto' }),
  })
  .meta({ id: 'UpsertPagePayloadDto' });

const publishAllRequest = z
  .object({
    addIcsPublicKeyPayload: itemActionsRequest
      .optional()
      .meta({ description: "Item actions on the user's ICS public key page" }),
    addContextGroupPRIDEntryPayload: itemActionsRequest
      .optional()
      .meta({ description: "Item actions on the user's context group PRID page" }),
    addContentGroupMetadataPayload: pageUpsertRequest
      .optional()
      .meta({ description: "A page of the user's context group metadata" }),
  })
  .meta({ id: 'IcsPublishAllRequestDto' });

const ITEMIZED_PARTS = ['addIcsPublicKeyPayload', 'addContextGroupPRIDEntryPayload'] as const;

/** POST /v1/ics/{accountId}/publishAll: a user's signed ICS records, in one capacity batch. */
export function icsRoutes(options: WriteRouteOptions): Route[] {
  const { chain, intake, providerId, chainWaitMs } = options;
  return [
    writeRoute(options, {
      method: 'post',
      path: '/v1/ics/{accountId}/publishAll',
      operationId: 'IcsControllerV1_publishAll_v1',
      summary: "Publish a user's ICS records (public key, context group PRID entry, context group metadata)",
      description:
        'Each part is optional and signed by the account in the path: item actions (ItemizedSignaturePayloadV2) or a page (PaginatedUpsertSignaturePayloadV2), sr25519, ed25519 or Ethereum. Every signature and expiration is checked before queueing; the parts go on chain together in one payWithCapacityBatchAll and the outcome arrives as a CAPACITY_BATCH webhook.',
      tags: ['ics'],
      params: z.object({ accountId: accountIdParam }),
      body: publishAllRequest,
      responses: {
        202: {
          description: 'Queued',
          schema: z.object({ referenceId: z.string() }).meta({ id: 'IcsPublishAllResponseDto' }),
        },
        204: { description: 'No part was given: nothing to do' },
        400: {
          description: 'An account without an MSA, a part signed by another account, a bad signature or expiration',
        },
      },
      handler: async ({ params, body }) => {
        const { api, queries, heads } = await fromChain(() => chain.ready(chainWaitMs));
        const { accountId } = params;
        const msaId = await fromChain(() => queries.msaIdOf(accountId));
        if (msaId === undefined) throw badRequest(`accountId: ${accountId} has no MSA`);
        const given = [...ITEMIZED_PARTS, 'addContentGroupMetadataPayload' as const].filter((part) => body[part]);
        if (given.length === 0) return { status: 204 };

        const finalized = heads().finalized;
        const problems = given.flatMap((part) => [
          ...(body[part]?.accountId === accountId ? [] : [`${part}.accountId: not the account in the path`]),
          ...passedExpiration(body[part]?.payload.expiration ?? 0, finalized, `${part}.payload.expiration`),
        ]);
        if (problems.length > 0) throw badRequest(problems);

        const calls: ChainCall[] = ITEMIZED_PARTS.flatMap((part) => {
          const request = body[part];
          return request ? [itemActionsCall(api, accountId, request, `${part}.proof`)] : [];
        });
        const page = body.addContentGroupMetadataPayload;
        if (page) {
          const payload = new SignedPayloads(api).paginatedUpsertV2(page.payload);
          const chainId = eip712ChainIdOf(chainTypeOf(api.genesisHash.toHex()));
          const field = 'addContentGroupMetadataPayload.signature';
          const proof = verifiedProof(
            accountId,
            page.signature,
            payload,
            'PaginatedUpsertSignaturePayloadV2',
            field,
            chainId,
          );
          calls.push(accountCalls(api).build('statefulStorage.upsertPageWithSignatureV2', accountId, proof, payload));
        }
        const queued = await queueTransaction(
          intake,
          providerId,
          {
            type: 'CAPACITY_BATCH',
            identity: { accountId, body },
            accountId,
            msaId,
            ss58Prefix: api.registry.chainSS58 as number,
          },
          { calls },
        );
        return { status: 202, body: { referenceId: queued.referenceId } };
      },
    }),
  ];
}
