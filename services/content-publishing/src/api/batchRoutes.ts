import { badRequest, defineRoute, type Route } from '@frequency-gateway/platform';
import type { RequestHandler } from 'express';
import { z } from 'zod';
import type { SchemaDirectory } from '@frequency-gateway/chain';
import { JOB_NAMES, type BatchFile, type BatchFilesJob } from '../jobs.js';
import { CONTENT_PUBLISHING_QUEUES } from '../queues.js';
import { TOO_MANY_FILES, uploadResults } from './assets.js';
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
    jobName: JOB_NAMES.batchFiles,
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

const schemaIdField = z.array(schemaIdSchema());

/** Batch announcements: stored Parquet files by CID (v2) and uploaded ones (v3). */
export function batchRoutes(intake: Intake, directory: SchemaDirectory, upload: RequestHandler[]): Route[] {
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
        'Multipart: file parts (Parquet) and one `schemaId` field per file, paired in order. Each file is streamed into IPFS and announced under its own referenceId.',
      tags: ['content'],
      // Checked by the handler, which reports problems per file and schemaId.
      body: z.object({
        files: z
          .array(z.string().meta({ format: 'binary' }))
          .optional()
          .meta({ description: 'Parquet files (application/vnd.apache.parquet)' }),
        schemaId: z
          .union([z.string(), z.array(z.string())])
          .optional()
          .meta({
            description: 'The schema of each file (an IPFS Parquet schema id), one field per file, in file order',
          }),
      }),
      bodyContentType: 'multipart/form-data',
      middleware: upload,
      responses: {
        200: { description: 'Every file uploaded and announced', schema: BatchAnnouncementResponseDto },
        207: {
          description: 'Some files failed; each entry has referenceId and cid, or error',
          schema: BatchAnnouncementResponseDto,
        },
        400: { description: 'No files, too many files, or schemaIds missing, extra or invalid' },
        500: { description: 'No file could be uploaded or announced', schema: BatchAnnouncementResponseDto },
        503: { description: 'The chain is not reachable; nothing was announced' },
      },
      handler: async (_input, { req }) => {
        const uploads = uploadResults(req);
        if (uploads.length === 0) throw badRequest('files: no files in the request');
        if (uploads.some((file) => 'error' in file && file.error === TOO_MANY_FILES))
          throw badRequest(`files: more files than this service accepts in one request`);
        const raw = (req.body as { schemaId?: unknown } | undefined)?.schemaId;
        const given = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
        if (given.length !== uploads.length)
          throw badRequest(
            `schemaId: ${given.length} schemaId field(s) for ${uploads.length} file(s); send one schemaId per file, in file order`,
          );
        const parsed = schemaIdField.safeParse(given);
        if (!parsed.success)
          throw badRequest(parsed.error.issues.map((issue) => `schemaId.${issue.path.join('.')}: ${issue.message}`));
        const schemaIds = parsed.data;
        await checkSchemas(
          directory,
          [...new Set(schemaIds)].map((schemaId) => ({
            schemaId,
            path: `schemaId.${schemaIds.indexOf(schemaId)}`,
          })),
        );

        const files = await Promise.all(
          uploads.map(async (upload, index) => {
            if ('error' in upload) return { error: upload.error };
            try {
              const { referenceId } = await acceptFiles(intake, [{ cid: upload.cid, schemaId: schemaIds[index]! }]);
              return { referenceId, cid: upload.cid };
            } catch {
              return { cid: upload.cid, error: 'Uploaded, but the batch announcement could not be queued' };
            }
          }),
        );
        const failed = files.filter((file) => 'error' in file).length;
        const status = failed === 0 ? 200 : failed === files.length ? 500 : 207;
        return { status, body: { files } };
      },
    }),
  ];
}
