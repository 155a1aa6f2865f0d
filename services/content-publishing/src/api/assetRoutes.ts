import { badRequest, defineRoute, HttpError, type Route } from '@frequency-gateway/platform';
import { z } from 'zod';
import { uploadResults, type UploadResult } from './assets.js';
import type { RequestHandler } from 'express';

const binaryFiles = z.object({
  files: z
    .array(z.string().meta({ format: 'binary' }))
    .optional()
    .meta({ description: 'The files, each with its own Content-Type (images, video, audio, Parquet)' }),
});

const uploadResult = z.union([
  z.object({ cid: z.string().meta({ description: 'CIDv1 of the stored file' }) }),
  z.object({ error: z.string() }),
]);

/** Asset upload routes: v2 (per-file results) and the deprecated v1 (all or nothing). */
export function assetRoutes(upload: RequestHandler[]): Route[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v2/asset/upload',
      operationId: 'AssetControllerV2_uploadFile_v2',
      summary: 'Upload assets, streamed to IPFS',
      description:
        'Each file is streamed into IPFS as it arrives. The answer lists every file in request order with its CID, or the reason it was refused (type, size, count).',
      tags: ['asset'],
      body: binaryFiles,
      bodyContentType: 'multipart/form-data',
      middleware: upload,
      responses: {
        202: { description: 'One entry per file', schema: z.object({ files: z.array(uploadResult) }) },
        400: { description: 'No files, or not a multipart request' },
      },
      handler: (_input, { req }) => {
        const files = uploadResults(req);
        if (files.length === 0) throw badRequest('files: no files in the request');
        return { status: 202, body: { files } };
      },
    }),
    defineRoute({
      method: 'put',
      path: '/v1/asset/upload',
      operationId: 'AssetControllerV1_assetUpload_v1',
      summary: 'Upload assets (deprecated: use POST /v2/asset/upload)',
      tags: ['asset'],
      body: binaryFiles,
      bodyContentType: 'multipart/form-data',
      middleware: upload,
      responses: {
        202: { description: 'The CIDs, in upload order', schema: z.object({ assetIds: z.array(z.string()) }) },
        400: { description: 'No files, too many files or a file too large' },
        422: { description: 'A file type that is not allowed' },
      },
      handler: (_input, { req }) => {
        const files = uploadResults(req);
        const errors = files.flatMap((file: UploadResult, index) =>
          'error' in file ? [`files.${index}: ${file.error}`] : [],
        );
        if (files.length === 0) errors.push('files: no files in the request');
        if (errors.length > 0) {
          const status = errors.every((error) => error.includes('Unsupported file type')) ? 422 : 400;
          throw new HttpError(status, errors);
        }
        return { status: 202, body: { assetIds: files.map((file) => (file as { cid: string }).cid) } };
      },
    }),
  ];
}
