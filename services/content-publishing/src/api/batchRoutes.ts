import { badRequest, defineRoute, HttpError, type Route } from '@frequency-gateway/platform';
import { z } from 'zod';
import type { SchemaDirectory } from '@frequency-gateway/chain';
import { PUBLISH_JOB_NAMES, type BatchFile, type BatchFilesJob } from '../jobs/publish.js';
import { CONTENT_PUBLISHING_QUEUES } from '../queues.js';
import { BATCH_MIME_TYPES } from './assets.js';
import { fileParts, isStored, receivedFiles, refusals, UPLOAD_REFUSALS, type Uploads } from './uploads.js';
import { fromChain } from '@frequency-gateway/chain';
import type { Intake } from '@frequency-gateway/platform';
import { AnnouncementResponseDto, BatchFilesDto, schemaId as schemaIdSchema } from './schemas.js';

/** Why a schema cannot carry batch files, or undefined when it can (IPFS payload, Parquet model). */
async function batchSchemaProblem(directory: SchemaDirectory, schemaId: number): Promise<string | undefined> {
  const schema = await fromChain(() => directory.schema(schemaId));
  if (!schema) return `schema ${schemaId} does not exist`;
  if (schema.payloadLocation !== 'IPFS' || schema.modelType !== 'Parquet')
    return `schema ${schemaId} is not an IPFS Parquet schema (${schema.payloadLocation}, ${schema.modelType})`;
  return undefined;
}

async function checkSchemas(directory: SchemaDirectory, files: { schemaId: number; path: string }[]): Promise<void> {
  const problems = await Promise.all(
    files.map(async ({ schemaId, path }) => {
      const problem = await batchSchemaProblem(directory, schemaId);
      return problem ? `${path}: ${problem}` : undefined;
    }),
  );
  const found = problems.filter((problem) => problem !== undefined);
  if (found.length > 0) throw badRequest(found);
}

const acceptFiles = (intake: Intake, files: BatchFile[]) =>
  intake.accept<BatchFilesJob>({
    kind: 'batch-files',
    identity: { files },
    queue: CONTENT_PUBLISHING_QUEUES.publish,
    jobName: PUBLISH_JOB_NAMES.batchFiles,
    job: (referenceId) => ({ referenceId, files, acceptedAt: new Date().toISOString() }),
  });

const BatchAnnouncementDto = z
  .object({
    referenceId: z.string().optional().meta({ description: 'Tracking id of the announcement of this file' }),
    cid: z.string().optional().meta({ description: 'CIDv1 of the uploaded file' }),
    error: z.string().optional().meta({ description: 'Why this file was not uploaded or announced' }),
  })
  .meta({ id: 'BatchAnnouncementDto' });

const BatchAnnouncementResponseDto = z
  .object({ files: z.array(BatchAnnouncementDto) })
  .meta({ id: 'BatchAnnouncementResponseDto' });

/** Batch announcements: stored Parquet files by CID (v2) and uploaded ones (v3). */
export function batchRoutes(intake: Intake, directory: SchemaDirectory, uploads: Uploads): Route[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v2/content/batchAnnouncement',
      operationId: 'ContentControllerV2_postBatches_v2',
      summary: 'Announce Parquet batch files already in IPFS',
      description:
        'Each schemaId must be an IPFS Parquet schema. The worker checks that each file exists before announcing it. The files are announced together under one referenceId.',
      tags: ['content'],
      body: BatchFilesDto,
      responses: {
        202: { description: 'Accepted', schema: AnnouncementResponseDto },
        400: { description: 'A missing or malformed field, or a schema that cannot carry batch files' },
        503: { description: 'The chain or Redis is not reachable; nothing was accepted' },
      },
      handler: async ({ body }) => {
        await checkSchemas(
          directory,
          body.batchFiles.map((file, index) => ({
            schemaId: file.schemaId,
            path: `body.batchFiles.${index}.schemaId`,
          })),
        );
        const files = body.batchFiles.map(({ cid, schemaId }) => ({ cid, schemaId }));
        const { referenceId } = await acceptFiles(intake, files);
        return { status: 202, body: { referenceId } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v3/content/batchAnnouncement',
      operationId: 'ContentControllerV3_postUploadBatchAnnouncement_v3',
      summary: 'Upload Parquet batch files and announce them',
      description:
        'Multipart: file parts (Parquet) and one `schemaId` field per file, paired in order. Each file is streamed into IPFS and announced under its own referenceId. Files of another type are refused one by one (207); a request over a limit, or with schemaIds missing or invalid, is refused as a whole and nothing of it is kept.',
      tags: ['content'],
      body: z.object({
        files: fileParts('Parquet files (application/vnd.apache.parquet)'),
        schemaId: z.array(schemaIdSchema()).meta({
          description: 'The schema of each file (an IPFS Parquet schema id), one field per file, in file order',
        }),
      }),
      bodyContentType: 'multipart/form-data',
      middleware: [uploads.receive(BATCH_MIME_TYPES)],
      responses: {
        200: { description: 'Every file uploaded and announced', schema: BatchAnnouncementResponseDto },
        207: {
          description:
            'Some files were refused (their type) or could not be announced; each entry has referenceId and cid, or error',
          schema: BatchAnnouncementResponseDto,
        },
        ...UPLOAD_REFUSALS,
        400: {
          description: `${UPLOAD_REFUSALS[400].description}; or schemaIds missing, extra, invalid or not IPFS Parquet schemas`,
        },
        415: { description: 'No file is a Parquet file; each is named with its type; nothing was kept' },
        503: {
          description: 'The chain, the content store or Redis is not reachable; nothing was announced; try again',
        },
      },
      handler: async ({ body }, { req, log }) => {
        const received = receivedFiles(req);
        const schemaIds = body.schemaId;
        if (schemaIds.length !== received.length)
          throw badRequest(
            `body.schemaId: ${schemaIds.length} schemaId field(s) for ${received.length} file(s); send one schemaId per file, in file order`,
          );
        await checkSchemas(
          directory,
          [...new Set(schemaIds)].map((schemaId) => ({
            schemaId,
            path: `body.schemaId.${schemaIds.indexOf(schemaId)}`,
          })),
        );
        const stored = received.filter(isStored);
        if (stored.length === 0) throw new HttpError(415, refusals(received));
        await uploads.keep(stored, log);

        const queued = await Promise.all(
          received.map(async (file): Promise<{ entry: z.input<typeof BatchAnnouncementDto>; failure?: unknown }> => {
            if ('refused' in file) return { entry: { error: file.refused } };
            const { cid } = file.stored;
            try {
              const { referenceId } = await acceptFiles(intake, [{ cid, schemaId: schemaIds[file.index]! }]);
              return { entry: { referenceId, cid } };
            } catch (failure) {
              log.error({ err: failure, cid }, 'an uploaded batch file could not be queued for announcement');
              return { entry: { cid, error: 'Uploaded, but the batch announcement could not be queued' }, failure };
            }
          }),
        );
        // Nothing announced: the cause (Redis away: 503) is the answer, as on every other route.
        if (!queued.some(({ entry }) => entry.referenceId !== undefined))
          throw queued.find(({ failure }) => failure !== undefined)?.failure;
        const files = queued.map(({ entry }) => entry);
        return { status: files.some((file) => file.error !== undefined) ? 207 : 200, body: { files } };
      },
    }),
  ];
}
