import { defineRoute, HttpError, type Route } from '@frequency-gateway/platform';
import { z } from 'zod';
import { UPLOAD_MIME_TYPES } from './assets.js';
import { fileParts, isStored, receivedFiles, refusals, UPLOAD_REFUSALS, type Uploads } from './uploads.js';

const assetFiles = z.object({
  files: fileParts('The files, each with its own Content-Type (images, video, audio, Parquet)'),
});

const uploadResult = z.union([
  z.object({ cid: z.string().meta({ description: 'CIDv1 of the stored file' }) }),
  z.object({ error: z.string().meta({ description: 'Why this file was refused (its type)' }) }),
]);

/** Asset upload routes: v2 (per-file results) and the deprecated v1 (all or nothing). */
export function assetRoutes(uploads: Uploads): Route[] {
  const receive = [uploads.receive(UPLOAD_MIME_TYPES)];
  return [
    defineRoute({
      method: 'post',
      path: '/v2/asset/upload',
      operationId: 'AssetControllerV2_uploadFile_v2',
      summary: 'Upload assets, streamed to IPFS',
      description:
        'Each file is streamed into IPFS as it arrives. The answer lists every file in request order with its CID, or the reason it was refused (its type). A request over a limit is refused as a whole.',
      tags: ['asset'],
      body: assetFiles,
      bodyContentType: 'multipart/form-data',
      middleware: receive,
      responses: {
        202: {
          description: 'One entry per file; at least one was stored',
          schema: z.object({ files: z.array(uploadResult) }),
        },
        ...UPLOAD_REFUSALS,
        415: { description: 'No file is of a type this operation takes; each is named with its type' },
      },
      handler: async (_input, { req, log }) => {
        const files = receivedFiles(req);
        const stored = files.filter(isStored);
        if (stored.length === 0) throw new HttpError(415, refusals(files));
        await uploads.keep(stored, log);
        return {
          status: 202,
          body: {
            files: files.map((file) => ('refused' in file ? { error: file.refused } : { cid: file.stored.cid })),
          },
        };
      },
    }),
    defineRoute({
      method: 'put',
      path: '/v1/asset/upload',
      operationId: 'AssetControllerV1_assetUpload_v1',
      summary: 'Upload assets (deprecated: use POST /v2/asset/upload)',
      description: 'All or nothing: every file is kept, or none.',
      tags: ['asset'],
      deprecated: true,
      body: assetFiles,
      bodyContentType: 'multipart/form-data',
      middleware: receive,
      responses: {
        202: { description: 'The CIDs, in upload order', schema: z.object({ assetIds: z.array(z.string()) }) },
        ...UPLOAD_REFUSALS,
        422: { description: 'A file of a type that is not allowed (each is named); nothing was kept' },
      },
      handler: async (_input, { req, log }) => {
        const files = receivedFiles(req);
        const refused = refusals(files);
        if (refused.length > 0) throw new HttpError(422, refused);
        const stored = files.filter(isStored);
        await uploads.keep(stored, log);
        return { status: 202, body: { assetIds: stored.map((file) => file.stored.cid) } };
      },
    }),
  ];
}
