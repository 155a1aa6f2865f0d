import { badRequest, defineRoute, HttpError, unprocessable, type Route } from '@frequency-gateway/platform';
import { z } from 'zod';
import type { DelegationGate, SchemaDirectory } from '@frequency-gateway/chain';
import { PUBLISH_JOB_NAMES, type OnChainJob } from '../jobs/publish.js';
import { CONTENT_PUBLISHING_QUEUES } from '../queues.js';
import { fromChain } from '@frequency-gateway/chain';
import type { Intake } from '@frequency-gateway/platform';
import { AnnouncementResponseDto, OnChainContentDto, OnChainContentDtoV2 } from './schemas.js';
import { checkSender } from './senders.js';

const emptyError = (id: string) => z.object({}).meta({ id });

const gone = () => new HttpError(410, 'POST /v2/content/{msaId}/on-chain was removed: use POST /v3/content/on-chain');

/** The schema to publish with: `schemaId`, or the latest schema of `intentName` (which must then own schemaId). */
async function resolveSchemaId(
  directory: SchemaDirectory,
  body: { intentName?: string | undefined; schemaId?: number | undefined },
): Promise<number> {
  if (body.intentName === undefined) return body.schemaId as number;
  const intent = await fromChain(() => directory.intentByName(body.intentName as string));
  if (!intent) throw badRequest(`body.intentName: "${body.intentName}" is not a registered intent`);
  if (intent.latestSchemaId === undefined)
    throw badRequest(`body.intentName: intent "${body.intentName}" has no schemas`);
  if (body.schemaId !== undefined && !intent.schemaIds.includes(body.schemaId))
    throw badRequest(`body.schemaId: schema ${body.schemaId} does not belong to intent "${body.intentName}"`);
  return body.schemaId ?? intent.latestSchemaId;
}

/** On-chain content: v3 publishes (for a user or as the provider); v2 is gone. */
export function onChainRoutes(intake: Intake, directory: SchemaDirectory, gate: DelegationGate): Route[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v2/content/{msaId}/on-chain',
      operationId: 'ContentControllerV2_postContent_v2',
      summary: 'Gone: use POST /v3/content/on-chain',
      description:
        'Always answers 410, whatever the path and body: neither is read. The body it took (OnChainContentDto) stays documented for clients generated from it.',
      tags: ['content'],
      deprecated: true,
      params: z.object({ msaId: z.string().meta({ description: 'MSA id of the user the content was from' }) }),
      body: OnChainContentDto,
      // Answers before the parameters and body are validated, so that it is 410 whatever they are.
      middleware: [(_request, _response, next) => next(gone())],
      responses: { 410: { description: 'This operation was removed; use POST /v3/content/on-chain' } },
      handler: () => {
        throw gone();
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v3/content/on-chain',
      operationId: 'ContentControllerV3_postOnChainContent_v3',
      summary: 'Publish a message stored on chain',
      description:
        "The schema is `schemaId`, or the latest schema of `intentName`; it must store its payload on chain. With `msaId` the provider publishes for that user, who must have delegated the schema's intent to it.",
      tags: ['content'],
      body: OnChainContentDtoV2,
      responses: {
        202: { description: 'Accepted', schema: AnnouncementResponseDto },
        400: {
          description: 'A missing or malformed field, an unknown intent, or a user (msaId) with no MSA',
          schema: emptyError('BadRequestException'),
        },
        401: {
          description: 'The user has not delegated the intent to this provider',
          schema: emptyError('UnauthorizedException'),
        },
        413: {
          description: "The payload is larger than the chain's limit",
          schema: emptyError('PayloadTooLargeException'),
        },
        422: {
          description: 'The schema does not exist or does not store on chain',
          schema: emptyError('UnprocessableEntityException'),
        },
        503: { description: 'The chain or Redis is not reachable; nothing was accepted' },
      },
      handler: async ({ body }) => {
        const schemaId = await resolveSchemaId(directory, body);
        const payloadBytes = (body.payload.length - 2) / 2;
        const limit = await fromChain(() => directory.maxOnChainPayloadBytes());
        if (payloadBytes > limit)
          throw new HttpError(413, `body.payload: ${payloadBytes} bytes, more than the chain's limit of ${limit}`);
        const schema = await fromChain(() => directory.schema(schemaId));
        if (!schema) throw unprocessable(`body.schemaId: schema ${schemaId} does not exist`);
        if (schema.payloadLocation !== 'OnChain')
          throw unprocessable(
            `body.schemaId: schema ${schemaId} stores its payload in ${schema.payloadLocation}, not on chain`,
          );
        const onBehalfOf = body.msaId?.toString();
        if (body.msaId !== undefined) await checkSender(gate, 'body.msaId', body.msaId, schema.intentId);
        const fields = { schemaId, payload: body.payload.toLowerCase(), published: body.published, onBehalfOf };
        const { referenceId } = await intake.accept<OnChainJob>({
          kind: 'on-chain',
          identity: fields,
          details: { msaId: onBehalfOf },
          queue: CONTENT_PUBLISHING_QUEUES.publish,
          jobName: PUBLISH_JOB_NAMES.onChain,
          job: (id) => ({
            referenceId: id,
            ...fields,
            intentId: schema.intentId,
            ...(onBehalfOf === undefined ? {} : { onBehalfOf }),
            acceptedAt: new Date().toISOString(),
          }),
        });
        return { status: 202, body: { referenceId } };
      },
    }),
  ];
}
