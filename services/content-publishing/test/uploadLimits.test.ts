import { connect } from 'node:net';
import { once } from 'node:events';
import { startDevchain, type Devchain } from '@frequency-gateway/devchain';
import { startKubo, startRedisServer, type LocalKubo, type LocalRedis } from '@frequency-gateway/devstack';
import { Redis } from 'ioredis';
import { startComponentProcess, type ComponentProcess } from '@frequency-gateway/devstack/gateway';
import { FORM_BOUNDARY, generatedBytes, multipartBody, sendMultipart, type FormPart } from './support/apiProcess.js';
import { expectDocumented, png } from './support/stack.js';

const MiB = 1024 * 1024;
const LIMIT = 2 * MiB;
const PARQUET = 'application/vnd.apache.parquet';

/** The three multipart routes, each with what it needs besides its files. */
const ROUTES = [
  { method: 'POST', path: '/v2/asset/upload', type: 'image/png', fields: [] as FormPart[] },
  { method: 'PUT', path: '/v1/asset/upload', type: 'image/png', fields: [] as FormPart[] },
  {
    method: 'POST',
    path: '/v3/content/batchAnnouncement',
    type: PARQUET,
    fields: [
      { name: 'schemaId', content: '1' },
      { name: 'schemaId', content: '1' },
    ],
  },
];

const messageOf = (text: string) => (JSON.parse(text) as { message: string[] }).message;

/**
 * Multipart limits as the api process enforces them while it reads the body, in front of a real Kubo: a refused
 * request is answered as soon as a limit is crossed, the rest of the body is not read, and nothing of it is kept
 * (neither pinned in Kubo nor recorded as an asset).
 */
describe('upload limits, enforced while streaming', () => {
  let redisServer: LocalRedis;
  let devchain: Devchain;
  let kubo: LocalKubo;
  let api: ComponentProcess;
  let redis: Redis;

  /** What the api keeps of uploads: Kubo's recursive pins and the asset records. */
  const kept = async () => {
    const response = await fetch(`${kubo.apiUrl}/api/v0/pin/ls?type=recursive`, { method: 'POST' });
    const pins = Object.keys(((await response.json()) as { Keys?: Record<string, unknown> }).Keys ?? {});
    return { pins: pins.sort(), assets: (await redis.keys('{content-publishing}:asset:*')).sort() };
  };

  beforeAll(async () => {
    [redisServer, devchain, kubo] = await Promise.all([startRedisServer(), startDevchain(), startKubo()]);
    redis = new Redis(redisServer.url);
    api = await startComponentProcess('content-publishing', 'api', {
      REDIS_URL: redisServer.url,
      FREQUENCY_API_WS_URL: devchain.url,
      PROVIDER_ID: '1',
      IPFS_ENDPOINT: kubo.apiUrl,
      FILE_UPLOAD_MAX_SIZE_IN_BYTES: String(LIMIT),
    });
  }, 120_000);
  afterAll(async () => {
    redis?.disconnect();
    await api?.stop();
    await kubo?.stop();
    await devchain?.close();
    await redisServer?.stop();
  });

  it.each(ROUTES)(
    '$method $path: 413 for a 300 MB file over the 2 MiB limit, before the rest is read; nothing kept',
    async ({ method, path, type, fields }) => {
      const before = await kept();
      const parts: FormPart[] = [
        ...fields,
        // A file within the limit first: it must not be kept either.
        { name: 'files', filename: 'small', type, content: png(1000, 7) },
        { name: 'files', filename: 'huge', type, content: generatedBytes(300 * 1_000_000, 3) },
      ];
      const answer = await sendMultipart(api.url, multipartBody(parts), { method, path });
      expect(answer.status).toBe(413);
      expect(messageOf(answer.text)).toEqual([
        'body.files.1 ("huge"): is larger than 2097152 bytes, the most one file may have (FILE_UPLOAD_MAX_SIZE_IN_BYTES)',
      ]);
      // The client got to send the limit plus what the sockets buffer on the way, not the 300 MB.
      expect(answer.sent).toBeLessThan(LIMIT + 32 * MiB);
      expect(await kept()).toEqual(before);
      await expectDocumented(api.url, method.toLowerCase(), path, answer.status);
      expect((await fetch(`${api.url}/livez`)).status).toBe(200);
    },
    120_000,
  );

  it('400 for 500,000 tiny file parts (about 75 MB), answered at the 11th before the rest is read, with no growth of the api’s memory', async () => {
    const before = await kept();
    function* parts() {
      for (let i = 0; i < 500_000; i++)
        yield { name: 'files', filename: `${i}.png`, type: 'image/png', content: png(16, i) };
    }
    api.resetPeak();
    const memory = api.memory();
    const answer = await sendMultipart(api.url, inChunksOf(64 * 1024, multipartBody(parts())));
    expect(answer.status).toBe(400);
    expect(messageOf(answer.text)).toEqual([
      'body.files: more than 10 files in one request, the most it may carry (FILE_UPLOAD_COUNT_LIMIT)',
    ]);
    // The client got to send what the sockets buffer on the way, not the 75 MB.
    expect(answer.sent).toBeLessThan(32 * MiB);
    expect(api.memory().peak - memory.rss).toBeLessThan(16 * MiB);
    expect(await kept()).toEqual(before);
  }, 60_000);

  it('a client that reads its answer late (a busy or slow one, 3 s) still gets it: the refused connection waits', async () => {
    const socket = connect(Number(new URL(api.url).port), '127.0.0.1');
    await once(socket, 'connect');
    // Not reading, as a client busy elsewhere; a reset by the server would fail its pending writes.
    socket.pause();
    const errors: Error[] = [];
    socket.on('error', (error) => errors.push(error));
    socket.write(
      'POST /v2/asset/upload HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n' +
        `Content-Type: multipart/form-data; boundary=${FORM_BOUNDARY}\r\n\r\n`,
    );
    // Eleven files (refused at the 11th), then 64 MiB more that the api never reads.
    const files: FormPart[] = Array.from({ length: 11 }, (_, i) => ({
      name: 'files',
      filename: `${i}.png`,
      type: 'image/png',
      content: png(16, i),
    }));
    files.push({ name: 'files', filename: 'more.png', type: 'image/png', content: generatedBytes(64 * MiB) });
    for await (const chunk of multipartBody(files)) {
      socket.write(`${chunk.byteLength.toString(16)}\r\n`);
      socket.write(chunk);
      socket.write('\r\n');
    }
    // The scenario: the client gets to its answer 3 s late.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    socket.resume();
    await new Promise<void>((resolve) => {
      const seen = () => /\r\n\r\n\{.*\}/s.test(answer) || errors.length > 0 || socket.destroyed;
      if (seen()) return resolve();
      const check = () => seen() && (socket.off('data', check), socket.off('close', check), resolve());
      socket.on('data', check);
      socket.on('close', check);
    });
    socket.destroy();
    expect(errors.map(String)).toEqual([]);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toMatch(/more than 10 files in one request/);
  }, 60_000);

  it('400 for more text fields than the limit, and for a text field over its size', async () => {
    const fields = Array.from({ length: 10_000 }, () => ({ name: 'schemaId', content: '1' }));
    const many = await sendMultipart(api.url, multipartBody(fields), { path: '/v3/content/batchAnnouncement' });
    expect(many.status).toBe(400);
    expect(messageOf(many.text)).toEqual([
      'body: more than 20 text fields in one request, the most it may carry (FILE_UPLOAD_FIELD_COUNT_LIMIT)',
    ]);
    const long = await sendMultipart(api.url, multipartBody([{ name: 'schemaId', content: '1'.repeat(5_000) }]), {
      path: '/v3/content/batchAnnouncement',
    });
    expect(long.status).toBe(400);
    expect(messageOf(long.text)).toEqual([
      'body.schemaId: is longer than 1024 bytes, the most a text field may have (FILE_UPLOAD_FIELD_MAX_SIZE_IN_BYTES)',
    ]);
  }, 60_000);

  it('400 for a body that starts no part within its first 64 KiB, before the rest is read', async () => {
    const answer = await sendMultipart(api.url, generatedBytes(300 * 1_000_000));
    expect(answer.status).toBe(400);
    expect(messageOf(answer.text)).toEqual(['body: no multipart/form-data part begins within the first 66560 bytes']);
    expect(answer.sent).toBeLessThan(32 * MiB);
  }, 60_000);

  it('PUT /v1/asset/upload with 11 files: 400 naming the limit, and none of the first 10 is kept', async () => {
    const before = await kept();
    const files = (count: number, seed: number) =>
      Array.from({ length: count }, (_, i) => ({
        name: 'files',
        filename: `${i}.png`,
        type: 'image/png',
        content: png(5_000, seed + i),
      }));
    const eleven = await sendMultipart(api.url, multipartBody(files(11, 100)), {
      method: 'PUT',
      path: '/v1/asset/upload',
    });
    expect(eleven.status).toBe(400);
    expect(messageOf(eleven.text)).toEqual([
      'body.files: more than 10 files in one request, the most it may carry (FILE_UPLOAD_COUNT_LIMIT)',
    ]);
    expect(await kept()).toEqual(before);

    // Ten are within the limit: every one is pinned and recorded.
    const ten = await sendMultipart(api.url, multipartBody(files(10, 100)), {
      method: 'PUT',
      path: '/v1/asset/upload',
    });
    expect(ten.status).toBe(202);
    const { assetIds } = JSON.parse(ten.text) as { assetIds: string[] };
    expect(assetIds).toHaveLength(10);
    const after = await kept();
    expect(after.pins).toEqual([...new Set([...before.pins, ...assetIds])].sort());
    expect(after.assets).toEqual(
      [...new Set([...before.assets, ...assetIds.map((cid) => `{content-publishing}:asset:${cid}`)])].sort(),
    );
  }, 60_000);
});

/** The body in writes of about `size` bytes (many tiny parts, few writes): the client's cost is not what is measured. */
async function* inChunksOf(size: number, body: AsyncIterable<Uint8Array>) {
  let pending: Uint8Array[] = [];
  let length = 0;
  for await (const chunk of body) {
    pending.push(chunk);
    length += chunk.byteLength;
    if (length >= size) {
      yield Buffer.concat(pending);
      pending = [];
      length = 0;
    }
  }
  if (length > 0) yield Buffer.concat(pending);
}
