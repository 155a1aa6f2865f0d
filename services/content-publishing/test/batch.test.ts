import { jsonAnswerOf, callJson } from '@frequency-gateway/devstack';
import { ChainQueries } from '@frequency-gateway/chain';
import type { Queue } from 'bullmq';
import type { BatchFilesJob } from '../src/jobs/publish.js';
import { CONTENT_PUBLISHING_QUEUES } from '../src/queues.js';
import { contentId } from '@frequency-gateway/storage';
import { expectDocumented, form, png, startApiStack, type ApiStack } from './support/stack.js';

const CID_A = 'bafybeifcdlhd3gu4ryvvzf74kefmsvxtfdmt7tn2qoq2xlkv3yr4fd62ce';
const CID_B = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';
const PARQUET = 'application/vnd.apache.parquet';

describe('batch announcements', () => {
  let stack: ApiStack;
  let publish: Queue<BatchFilesJob>;
  let broadcastSchema: number;
  let itemizedSchema: number;

  /** Whether the api recorded the bytes as an uploaded asset. */
  const recorded = async (bytes: Uint8Array) =>
    (await stack.redis.exists(`{cp}:asset:${await contentId(bytes)}`)) === 1;
  const parquet = (seed: number) => ({ name: `${seed}.parquet`, type: PARQUET, bytes: png(500, seed) });
  const v3 = async (files: ReturnType<typeof parquet>[], schemaIds: string[]) => {
    const response = await fetch(`${stack.url}/v3/content/batchAnnouncement`, {
      method: 'POST',
      body: form(
        files,
        schemaIds.map((id) => ['schemaId', id]),
      ),
    });
    return jsonAnswerOf(response);
  };

  beforeAll(async () => {
    stack = await startApiStack({ FILE_UPLOAD_COUNT_LIMIT: '3' });
    publish = stack.queue(CONTENT_PUBLISHING_QUEUES.publish);
    const queries = new ChainQueries(stack.chain.api);
    broadcastSchema = (await queries.intentByName('dsnp.broadcast'))!.latestSchemaId!;
    itemizedSchema = (await queries.intentByName('dsnp.public-key-key-agreement'))!.latestSchemaId!;
  });
  afterAll(async () => {
    await stack?.close();
  });

  describe('v2, files already in IPFS', () => {
    it('queues the files under one referenceId, once', async () => {
      const body = {
        batchFiles: [
          { schemaId: broadcastSchema, cid: CID_A },
          { schemaId: String(broadcastSchema), cid: CID_B },
        ],
      };
      const answer = await callJson(stack.url, 'POST', '/v2/content/batchAnnouncement', body);
      expect(answer.status).toBe(202);
      expect(Object.keys(answer.body)).toEqual(['referenceId']);
      const job = (await stack.jobOf(publish, answer.body.referenceId))!;
      expect(job.name).toBe('batch-files');
      expect(job.data).toMatchObject({
        referenceId: answer.body.referenceId,
        files: [
          { cid: CID_A, schemaId: broadcastSchema },
          { cid: CID_B, schemaId: broadcastSchema },
        ],
      });
      const again = await callJson(stack.url, 'POST', '/v2/content/batchAnnouncement', body);
      expect(again.body.referenceId).toBe(answer.body.referenceId);
      expect((await callJson(stack.url, 'GET', `/v1/requests/${answer.body.referenceId}`)).body).toMatchObject({
        state: 'queued',
        kind: 'batch-files',
      });
    });

    it.each([
      ['an empty list', { batchFiles: [] }, /^body\.batchFiles: must list at least one batch file/],
      ['no list', {}, /^body\.batchFiles: is required/],
      [
        'a CIDv0',
        { batchFiles: [{ schemaId: 1, cid: 'QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG' }] },
        /^body\.batchFiles\.0\.cid: must be a CIDv1/,
      ],
      [
        'a made-up CID',
        { batchFiles: [{ schemaId: 1, cid: 'bafybei0189abcdef' }] },
        /^body\.batchFiles\.0\.cid: must be a CIDv1/,
      ],
      [
        'schemaId 0',
        { batchFiles: [{ schemaId: 0, cid: CID_A }] },
        /^body\.batchFiles\.0\.schemaId: must be a schema id from 1 to 65535/,
      ],
      [
        'schemaId 65536',
        { batchFiles: [{ schemaId: 65536, cid: CID_A }] },
        /^body\.batchFiles\.0\.schemaId: must be a schema id/,
      ],
      [
        'schemaId 1.5',
        { batchFiles: [{ schemaId: 1.5, cid: CID_A }] },
        /^body\.batchFiles\.0\.schemaId: must be a schema id/,
      ],
      [
        'an unknown schema',
        { batchFiles: [{ schemaId: 9999, cid: CID_A }] },
        /^body\.batchFiles\.0\.schemaId: schema 9999 does not exist/,
      ],
    ])('400 for %s', async (_name, body, expected) => {
      const answer = await callJson(stack.url, 'POST', '/v2/content/batchAnnouncement', body);
      expect(answer.status).toBe(400);
      expect(answer.body.message).toEqual([expect.stringMatching(expected)]);
    });

    it('400 for a schema that does not take batch files', async () => {
      const answer = await callJson(stack.url, 'POST', '/v2/content/batchAnnouncement', {
        batchFiles: [{ schemaId: itemizedSchema, cid: CID_A }],
      });
      expect(answer.status).toBe(400);
      expect(answer.body.message).toEqual([
        `body.batchFiles.0.schemaId: schema ${itemizedSchema} is not an IPFS Parquet schema (Itemized, AvroBinary)`,
      ]);
    });
  });

  describe('v3, uploaded files', () => {
    it('200 with a referenceId and CID per file, and no error entries, when every file is announced', async () => {
      const answer = await v3([parquet(1), parquet(2)], [String(broadcastSchema), String(broadcastSchema)]);
      expect(answer.status).toBe(200);
      expect(answer.body.files).toEqual([
        { referenceId: expect.any(String), cid: expect.stringMatching(/^bafkrei/) },
        { referenceId: expect.any(String), cid: expect.stringMatching(/^bafkrei/) },
      ]);
      const [first, second] = answer.body.files as { referenceId: string; cid: string }[];
      expect(first!.referenceId).not.toBe(second!.referenceId);
      expect((await stack.jobOf(publish, first!.referenceId))!.data.files).toEqual([
        { cid: first!.cid, schemaId: broadcastSchema },
      ]);
      await expectDocumented(stack.url, 'post', '/v3/content/batchAnnouncement', answer.status);
    });

    it('207 with the right entry per file when some files fail', async () => {
      const answer = await v3(
        [parquet(3), { name: 'x.png', type: 'image/png', bytes: png(100) }, parquet(4)],
        [String(broadcastSchema), String(broadcastSchema), String(broadcastSchema)],
      );
      expect(answer.status).toBe(207);
      expect(answer.body.files).toEqual([
        { referenceId: expect.any(String), cid: expect.any(String) },
        { error: 'Unsupported file type (image/png)' },
        { referenceId: expect.any(String), cid: expect.any(String) },
      ]);
      await expectDocumented(stack.url, 'post', '/v3/content/batchAnnouncement', answer.status);
    });

    it('415 naming each file and why when every file is refused, and nothing is kept', async () => {
      const image = png(100, 21);
      const answer = await v3(
        [
          { name: 'x.png', type: 'image/png', bytes: image },
          { name: 'y.txt', type: 'text/plain', bytes: png(10, 22) },
        ],
        [String(broadcastSchema), String(broadcastSchema)],
      );
      expect(answer.status).toBe(415);
      expect(answer.body.message).toEqual([
        'body.files.0 ("x.png"): Unsupported file type (image/png)',
        'body.files.1 ("y.txt"): Unsupported file type (text/plain)',
      ]);
      expect(await recorded(image)).toBe(false);
      await expectDocumented(stack.url, 'post', '/v3/content/batchAnnouncement', answer.status);
    });

    it('400 for no files, and the api goes on serving', async () => {
      const empty = await v3([], [String(broadcastSchema)]);
      expect(empty.status).toBe(400);
      expect(empty.body.message).toEqual(['body.files: is required']);
      const notMultipart = await callJson(stack.url, 'POST', '/v3/content/batchAnnouncement', { files: [] });
      expect(notMultipart.status).toBe(400);
      expect((await v3([parquet(5)], [String(broadcastSchema)])).status).toBe(200);
    });

    it('400 when schemaIds are missing, extra, invalid or not batch schemas, keeping none of the files', async () => {
      const missing = await v3([parquet(6), parquet(7)], [String(broadcastSchema)]);
      expect(missing.status).toBe(400);
      expect(missing.body.message).toEqual([
        'body.schemaId: 1 schemaId field(s) for 2 file(s); send one schemaId per file, in file order',
      ]);
      const invalid = await v3([parquet(6), parquet(7)], [String(broadcastSchema), 'abc']);
      expect(invalid.body.message).toEqual([expect.stringMatching(/^body\.schemaId\.1: must be a schema id/)]);
      const wrong = await v3([parquet(6)], [String(itemizedSchema)]);
      expect(wrong.status).toBe(400);
      expect(wrong.body.message).toEqual([
        expect.stringMatching(/^body\.schemaId\.0: schema \d+ is not an IPFS Parquet schema/),
      ]);
      expect(await recorded(parquet(6).bytes)).toBe(false);
      expect(await recorded(parquet(7).bytes)).toBe(false);
    });

    it('400 for more files than the limit', async () => {
      const answer = await v3([1, 2, 3, 4].map(parquet), Array(4).fill(String(broadcastSchema)));
      expect(answer.status).toBe(400);
      expect(answer.body.message).toEqual([
        'body.files: more than 3 files in one request, the most it may carry (FILE_UPLOAD_COUNT_LIMIT)',
      ]);
    });
  });
});
