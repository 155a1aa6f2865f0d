import { EmbeddedStore, dsnpHash } from '@frequency-gateway/storage';
import type { Redis } from 'ioredis';
import { form, png, startApiStack, type ApiStack } from './support/stack.js';

describe('asset upload', () => {
  let stack: ApiStack;
  let redis: Redis;
  let dir: string;
  let api: { url: string };
  beforeAll(async () => {
    stack = await startApiStack({ FILE_UPLOAD_MAX_SIZE_IN_BYTES: '100000', FILE_UPLOAD_COUNT_LIMIT: '3' });
    ({ redis, storeDir: dir, api } = stack);
  });
  afterAll(async () => stack?.close());

  const upload = (
    method: 'POST' | 'PUT',
    path: string,
    body: FormData | string,
    headers: Record<string, string> = {},
  ) => fetch(`${api.url}${path}`, { method, body, headers });

  it('v2 streams each file into IPFS and answers per file, in order', async () => {
    const image = png(50_000);
    const response = await upload(
      'POST',
      '/v2/asset/upload',
      form([
        { name: 'a.png', type: 'image/png', bytes: image },
        { name: 'a.txt', type: 'text/plain', bytes: new Uint8Array([1, 2, 3]) },
        { name: 'big.png', type: 'image/png', bytes: png(100_001) },
      ]),
    );
    expect(response.status).toBe(202);
    const { files } = (await response.json()) as { files: ({ cid: string } | { error: string })[] };
    expect(files).toEqual([
      { cid: expect.stringMatching(/^bafkrei/) },
      { error: 'Unsupported file type (text/plain)' },
      { error: 'File is larger than 100000 bytes' },
    ]);
    const { cid } = files[0] as { cid: string };
    const metadata = JSON.parse((await redis.get(`cp:asset:${cid}`)) as string);
    expect(metadata).toMatchObject({
      cid,
      mimeType: 'image/png',
      size: 50_000,
      type: 'image',
      dsnpHash: dsnpHash(image),
    });
    expect(await redis.ttl(`cp:asset:${cid}`)).toBe(-1);
    const store = new EmbeddedStore(dir);
    expect(await store.stat(cid)).toEqual({ cid, size: 50_000 });
    await store.close();
  });

  it('v2 refuses files past the count limit, and a request without files', async () => {
    const files = Array.from({ length: 4 }, (_, i) => ({ name: `${i}.png`, type: 'image/png', bytes: png(100 + i) }));
    const answer = (await (await upload('POST', '/v2/asset/upload', form(files))).json()) as { files: unknown[] };
    expect(answer.files[3]).toEqual({ error: 'Max file upload count per request exceeded' });
    expect(answer.files.slice(0, 3).every((file) => 'cid' in (file as object))).toBe(true);
    const empty = await upload('POST', '/v2/asset/upload', 'x', { 'content-type': 'text/plain' });
    expect(empty.status).toBe(400);
    expect(((await empty.json()) as { message: string[] }).message[0]).toMatch(/^files:/);
    // The api still serves after the refusals.
    expect((await upload('POST', '/v2/asset/upload', form([files[0]!]))).status).toBe(202);
  });

  it('v1 answers with the CIDs, 400 for a file too large and 422 for a type not allowed', async () => {
    const ok = await upload('PUT', '/v1/asset/upload', form([{ name: 'a.png', type: 'image/png', bytes: png(1000) }]));
    expect(ok.status).toBe(202);
    expect(((await ok.json()) as { assetIds: string[] }).assetIds).toEqual([expect.stringMatching(/^bafkrei/)]);
    const big = await upload(
      'PUT',
      '/v1/asset/upload',
      form([{ name: 'b.png', type: 'image/png', bytes: png(100_001) }]),
    );
    expect(big.status).toBe(400);
    const text = await upload('PUT', '/v1/asset/upload', form([{ name: 't', type: 'text/plain', bytes: png(10) }]));
    expect(text.status).toBe(422);
  });

  it('documents both operations with their operationIds', async () => {
    const doc = (await (await fetch(`${api.url}/docs/swagger.json`)).json()) as {
      paths: Record<string, Record<string, { operationId: string }>>;
    };
    expect(doc.paths['/v2/asset/upload']?.post?.operationId).toBe('AssetControllerV2_uploadFile_v2');
    expect(doc.paths['/v1/asset/upload']?.put?.operationId).toBe('AssetControllerV1_assetUpload_v1');
  });

  it('gates readiness on the content store', async () => {
    const health = (await (await fetch(`${api.url}/healthz`)).json()) as { checks: Record<string, { status: string }> };
    expect(health.checks.ipfs?.status).toBe('up');
  });
});
