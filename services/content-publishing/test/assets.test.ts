import { jsonAnswerOf } from '@frequency-gateway/devstack';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EmbeddedStore, contentId, dsnpHash } from '@frequency-gateway/storage';
import type { Redis } from 'ioredis';
import { expectDocumented, form, png, startApiStack, type ApiStack } from './support/stack.js';

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
  /** Sends files as a multipart form; the answer with its JSON body. */
  const send = async (method: 'POST' | 'PUT', path: string, files: Parameters<typeof form>[0]) =>
    jsonAnswerOf(await upload(method, path, form(files)));

  /** Whether the api kept a file: recorded as an asset, or pinned in the embedded store. */
  const kept = async (bytes: Uint8Array) => {
    const cid = await contentId(bytes);
    const pinsFile = join(dir, 'pins.json');
    const pins = existsSync(pinsFile) ? (JSON.parse(readFileSync(pinsFile, 'utf8')) as string[]) : [];
    return { recorded: (await redis.exists(`{cp}:asset:${cid}`)) === 1, pinned: pins.includes(cid) };
  };
  const NOT_KEPT = { recorded: false, pinned: false };

  it('v2 streams each file into IPFS and answers per file, in order', async () => {
    const image = png(50_000);
    const response = await upload(
      'POST',
      '/v2/asset/upload',
      form([
        { name: 'a.png', type: 'image/png', bytes: image },
        { name: 'a.txt', type: 'text/plain', bytes: new Uint8Array([1, 2, 3]) },
      ]),
    );
    expect(response.status).toBe(202);
    const { files } = (await response.json()) as { files: ({ cid: string } | { error: string })[] };
    expect(files).toEqual([
      { cid: expect.stringMatching(/^bafkrei/) },
      { error: 'Unsupported file type (text/plain)' },
    ]);
    const { cid } = files[0] as { cid: string };
    const metadata = JSON.parse((await redis.get(`{cp}:asset:${cid}`)) as string);
    expect(metadata).toMatchObject({
      cid,
      mimeType: 'image/png',
      size: 50_000,
      type: 'image',
      dsnpHash: dsnpHash(image),
    });
    expect(await redis.ttl(`{cp}:asset:${cid}`)).toBe(-1);
    expect(await kept(image)).toEqual({ recorded: true, pinned: true });
    const store = new EmbeddedStore(dir);
    expect(await store.stat(cid)).toEqual({ cid, size: 50_000 });
    await store.close();
  });

  it.each([
    ['POST', '/v2/asset/upload', 11],
    ['PUT', '/v1/asset/upload', 13],
  ] as const)(
    '%s %s: 413 naming the file and the limit for a file too large; nothing of the request kept',
    async (method, path, seed) => {
      const first = png(1_000, seed);
      const answer = await send(method, path, [
        { name: 'first.png', type: 'image/png', bytes: first },
        { name: 'big.png', type: 'image/png', bytes: png(100_001) },
      ]);
      expect(answer.status).toBe(413);
      expect(answer.body.message).toEqual([
        'body.files.1 ("big.png"): is larger than 100000 bytes, the most one file may have (FILE_UPLOAD_MAX_SIZE_IN_BYTES)',
      ]);
      expect(await kept(first)).toEqual(NOT_KEPT);
      await expectDocumented(api.url, method.toLowerCase(), path, answer.status);
    },
  );

  it('v2: 400 naming the limit for more files than it, and nothing of the request is kept', async () => {
    const files = Array.from({ length: 4 }, (_, i) => ({
      name: `${i}.png`,
      type: 'image/png',
      bytes: png(100 + i, 12),
    }));
    const answer = await send('POST', '/v2/asset/upload', files);
    expect(answer.status).toBe(400);
    expect(answer.body.message).toEqual([
      'body.files: more than 3 files in one request, the most it may carry (FILE_UPLOAD_COUNT_LIMIT)',
    ]);
    for (const file of files) expect(await kept(file.bytes)).toEqual(NOT_KEPT);
    // The api still serves after the refusal.
    expect((await upload('POST', '/v2/asset/upload', form([files[0]!]))).status).toBe(202);
    expect(await kept(files[0]!.bytes)).toEqual({ recorded: true, pinned: true });
  });

  it('v2: 400 for a request without files, not multipart, or malformed', async () => {
    const none = await jsonAnswerOf(await upload('POST', '/v2/asset/upload', form([], [['note', 'no files']])));
    expect(none.status).toBe(400);
    expect(none.body.message).toEqual(['body.files: is required']);
    const notMultipart = await jsonAnswerOf(
      await upload('POST', '/v2/asset/upload', 'x', { 'content-type': 'text/plain' }),
    );
    expect(notMultipart.status).toBe(400);
    expect(notMultipart.body.message).toEqual(['body: send the files as multipart/form-data']);
    const multipart = { 'content-type': 'multipart/form-data; boundary=B' };
    const unnamed = '--B\r\nContent-Disposition: form-data\r\n\r\nvalue\r\n--B--\r\n';
    const noName = await jsonAnswerOf(await upload('POST', '/v2/asset/upload', unnamed, multipart));
    expect(noName.status).toBe(400);
    expect(noName.body.message).toEqual(['body: a text field without a name']);
    const cutShort = await jsonAnswerOf(
      await upload('POST', '/v2/asset/upload', '--B\r\nContent-Disposition: form-data; name="a"\r\n\r\nva', multipart),
    );
    expect(cutShort.status).toBe(400);
    expect(cutShort.body.message).toEqual(['body: malformed multipart/form-data (Unexpected end of form)']);
    const noBoundary = await jsonAnswerOf(
      await upload('POST', '/v2/asset/upload', unnamed, { 'content-type': 'multipart/form-data' }),
    );
    expect(noBoundary.status).toBe(400);
    expect(noBoundary.body.message).toEqual([expect.stringMatching(/^body: not a multipart\/form-data body \(/)]);
  });

  it('v2: 415 naming each file when every file is of a type not allowed', async () => {
    const answer = await send('POST', '/v2/asset/upload', [
      { name: 'a.txt', type: 'text/plain', bytes: new Uint8Array([1]) },
      { name: 'b.pdf', type: 'application/pdf', bytes: new Uint8Array([2]) },
    ]);
    expect(answer.status).toBe(415);
    expect(answer.body.message).toEqual([
      'body.files.0 ("a.txt"): Unsupported file type (text/plain)',
      'body.files.1 ("b.pdf"): Unsupported file type (application/pdf)',
    ]);
    await expectDocumented(api.url, 'post', '/v2/asset/upload', answer.status);
  });

  it('v1 answers with the CIDs, and 422 naming each file of a type not allowed, keeping none then', async () => {
    const ok = await upload('PUT', '/v1/asset/upload', form([{ name: 'a.png', type: 'image/png', bytes: png(1000) }]));
    expect(ok.status).toBe(202);
    expect(((await ok.json()) as { assetIds: string[] }).assetIds).toEqual([expect.stringMatching(/^bafkrei/)]);
    const image = png(1_000, 14);
    const text = await send('PUT', '/v1/asset/upload', [
      { name: 'c.png', type: 'image/png', bytes: image },
      { name: 't', type: 'text/plain', bytes: png(10) },
    ]);
    expect(text.status).toBe(422);
    expect(text.body.message).toEqual(['body.files.1 ("t"): Unsupported file type (text/plain)']);
    expect(await kept(image)).toEqual(NOT_KEPT);
    for (const status of [202, 422]) await expectDocumented(api.url, 'put', '/v1/asset/upload', status);
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
