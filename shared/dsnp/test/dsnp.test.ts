import { jest } from '@jest/globals';
import { createHash } from 'node:crypto';
import { ParquetReader } from '@dsnp/parquetjs';
import { base32 } from 'multiformats/bases/base32';
import { create as createDigest } from 'multiformats/hashes/digest';
import {
  AnnouncementType,
  InvalidActivityContentError,
  buildNote,
  buildProfile,
  dsnpContentUri,
  dsnpUserUri,
  isDsnpContentHash,
  isDsnpContentUri,
  isDsnpUserUri,
  MAX_ANNOUNCED_USER_ID,
  parseDsnpContentUri,
  readBatch,
  rowProblems,
  writeBatch,
  writeBatchRows,
  type ParquetModel,
} from '../src/index.js';

const hashOf = (text: string) => base32.encode(createDigest(0x12, createHash('sha256').update(text).digest()).bytes);

describe('DSNP identifiers', () => {
  const hash = hashOf('hello');

  it('makes and checks content hashes, user and content URIs', () => {
    expect(isDsnpContentHash(hash)).toBe(true);
    expect(isDsnpContentHash(hash.slice(0, -2))).toBe(false);
    expect(isDsnpContentHash('zQm123')).toBe(false);
    expect(dsnpUserUri(42n)).toBe('dsnp://42');
    expect(isDsnpUserUri('dsnp://18446744073709551615')).toBe(true);
    expect(isDsnpUserUri('dsnp://18446744073709551616')).toBe(false);
    expect(isDsnpUserUri('dsnp://012')).toBe(false);
    const uri = dsnpContentUri(7, hash);
    expect(parseDsnpContentUri(uri)).toEqual({ userId: 7n, contentHash: hash });
    expect(isDsnpContentUri(`dsnp://7/${hash}/x`)).toBe(false);
    expect(isDsnpContentUri(`dsnp://7/nothash`)).toBe(false);
  });
});

describe('ActivityContent', () => {
  const imageHash = hashOf('image bytes');
  const videoHash = hashOf('video bytes');

  it('builds a Note with attachments that carry their own MIME type, hash, size and duration', () => {
    const note = buildNote({
      content: 'Hello #world @bob',
      published: '2026-11-21T10:00:00Z',
      attachments: [
        {
          type: 'image',
          name: 'cat',
          links: [
            {
              href: 'https://ipfs.io/ipfs/bafyimage',
              mediaType: 'image/png',
              hash: imageHash,
              width: 640,
              height: 480,
            },
          ],
        },
        {
          type: 'video',
          duration: 'PT1M30S',
          links: [
            {
              href: 'https://ipfs.io/ipfs/bafyvideo',
              mediaType: 'video/mp4',
              hash: videoHash,
              width: 1920,
              height: 1080,
            },
          ],
        },
        { type: 'link', href: 'https://example.org/article', name: 'article' },
      ],
      tags: [
        { type: 'hashtag', name: '#world' },
        { type: 'mention', id: 'dsnp://2', name: 'bob' },
      ],
    });
    expect(note).toEqual({
      '@context': 'https://www.w3.org/ns/activitystreams',
      type: 'Note',
      mediaType: 'text/plain',
      content: 'Hello #world @bob',
      published: '2026-11-21T10:00:00Z',
      attachment: [
        {
          type: 'Image',
          name: 'cat',
          url: [
            {
              type: 'Link',
              href: 'https://ipfs.io/ipfs/bafyimage',
              mediaType: 'image/png',
              hash: [imageHash],
              width: 640,
              height: 480,
            },
          ],
        },
        {
          type: 'Video',
          duration: 'PT1M30S',
          url: [
            {
              type: 'Link',
              href: 'https://ipfs.io/ipfs/bafyvideo',
              mediaType: 'video/mp4',
              hash: [videoHash],
              width: 1920,
              height: 1080,
            },
          ],
        },
        { type: 'Link', href: 'https://example.org/article', name: 'article' },
      ],
      tag: [{ name: '#world' }, { type: 'Mention', id: 'dsnp://2', name: 'bob' }],
    });
    expect('location' in note).toBe(false);
  });

  it('adds a location only when given, and builds a Profile', () => {
    const note = buildNote({
      content: 'here',
      published: '2026-11-21T10:00:00Z',
      location: { name: 'Lisbon', latitude: 38.7, longitude: -9.1 },
    });
    expect(note.location).toEqual({ type: 'Place', name: 'Lisbon', latitude: 38.7, longitude: -9.1 });
    const profile = buildProfile({
      name: 'Alice',
      summary: 'hi',
      icon: [
        { href: 'https://ipfs.io/ipfs/bafyicon', mediaType: 'image/png', hash: imageHash, width: 128, height: 128 },
      ],
    });
    expect(profile.type).toBe('Profile');
    expect(profile.icon?.[0]?.hash).toEqual([imageHash]);
  });

  it('refuses content the DSNP rules reject, naming the problem', () => {
    // The validation library also logs each refusal to the console.
    const logged = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    const bad = (attachments: Parameters<typeof buildNote>[0]['attachments']) => () =>
      buildNote({ content: 'x', published: '2026-11-21T10:00:00Z', attachments });
    expect(
      bad([{ type: 'image', links: [{ href: 'https://x/y', mediaType: 'image/png', hash: 'not-a-hash' }] }]),
    ).toThrow(InvalidActivityContentError);
    expect(
      bad([
        {
          type: 'audio',
          duration: '90 seconds',
          links: [{ href: 'https://x/a', mediaType: 'audio/mpeg', hash: imageHash }],
        },
      ]),
    ).toThrow(/duration/);
    expect(bad([{ type: 'link', href: 'ftp://example.org' }])).toThrow(/href/);
    expect(() =>
      buildNote({ content: 'x', published: '2026-11-21T10:00:00Z', tags: [{ type: 'mention', id: 'bob' }] }),
    ).toThrow(/not a DSNP user URI/);
    logged.mockRestore();
  });
});

describe('Parquet batch files', () => {
  const broadcast = async () => {
    const schemas = await import('@dsnp/schemas');
    return JSON.stringify(schemas.descriptorForAnnouncementType(schemas.AnnouncementType.Broadcast).parquetSchema);
  };

  it('writes announcements in the chain model and reads them back, also with the library alone', async () => {
    const model = JSON.parse(await broadcast());
    const rows = Array.from({ length: 250 }, (_, i) => ({
      announcementType: AnnouncementType.Broadcast,
      contentHash: hashOf(`post ${i}`),
      fromId: BigInt(1000 + i),
      url: `https://ipfs.io/ipfs/bafy${i}`,
    }));
    const file = await writeBatch(model, rows);
    expect(file.subarray(0, 4).toString()).toBe('PAR1');
    const read = await readBatch(file);
    expect(read).toEqual(rows);

    const reader = await ParquetReader.openBuffer(file);
    expect(Number(reader.getRowCount())).toBe(250);
    const cursor = reader.getCursor([['contentHash']]);
    const first = (await cursor.next()) as { contentHash: string };
    expect(first.contentHash).toBe(rows[0]!.contentHash);
    await reader.close();
  });

  /** Every DSNP announcement model of @dsnp/schemas the batches use (the profile's, in genesis only, is broadcast's). */
  const announcementModels = async (): Promise<[string, ParquetModel][]> => {
    const { AnnouncementType: Type, descriptorForAnnouncementType } = await import('@dsnp/schemas');
    return (['Tombstone', 'Broadcast', 'Reply', 'Reaction', 'Update'] as const).map((name) => [
      name,
      descriptorForAnnouncementType(Type[name]).parquetSchema as ParquetModel,
    ]);
  };
  /** A row that fits the model, with `fromId` as given. */
  const rowIn = (model: ParquetModel, fromId: bigint): Record<string, unknown> =>
    Object.fromEntries(
      model.map((column) => [
        column.name,
        column.name === 'fromId' ? fromId : typeof column.column_type === 'object' ? 1 : `${column.name} text`,
      ]),
    );

  it('holds user ids up to 2^63 − 1 in every announcement model, and names the rule for 2^63 and above', async () => {
    expect(MAX_ANNOUNCED_USER_ID).toBe(2n ** 63n - 1n);
    for (const [name, model] of await announcementModels()) {
      const largest = rowIn(model, 2n ** 63n - 1n);
      expect({ name, problems: rowProblems(model, largest) }).toEqual({ name, problems: [] });
      expect((await readBatch(await writeBatch(model, [largest])))[0]).toMatchObject({ fromId: 2n ** 63n - 1n });
      for (const fromId of [2n ** 63n, 2n ** 64n - 1n]) {
        expect({ name, problems: rowProblems(model, rowIn(model, fromId)) }).toEqual({
          name,
          problems: [
            `fromId: ${fromId} is out of range: must be from 0 to 9223372036854775807 (the file stores it as a signed 64-bit integer)`,
          ],
        });
        // The check is no stricter than the writer: the file cannot hold the row.
        await expect(writeBatch(model, [rowIn(model, fromId)])).rejects.toThrow(/out of range/);
      }
    }
  });

  it('names every problem of a row by its column', async () => {
    const reaction = new Map(await announcementModels()).get('Reaction')!;
    const good = { announcementType: AnnouncementType.Reaction, fromId: 7n, emoji: '👍', apply: 255, inReplyTo: 'x' };
    expect(rowProblems(reaction, good)).toEqual([]);
    expect(rowProblems(reaction, { ...good, apply: 256, emoji: 5, fromId: 'seven', inReplyTo: undefined })).toEqual([
      'emoji: 5 is not text',
      'apply: 256 is out of range: must be from 0 to 255 (the file stores it as an unsigned 8-bit integer)',
      'fromId: seven is not an integer',
      'inReplyTo: is missing',
    ]);
    expect(rowProblems(reaction, { ...good, apply: 1.5 })).toEqual(['apply: 1.5 is not an integer']);
  });

  it('writes the rows that fit and leaves out each other one with its reason', async () => {
    const broadcast = new Map(await announcementModels()).get('Broadcast')!;
    const rows = [
      rowIn(broadcast, 1n),
      rowIn(broadcast, 2n ** 63n),
      { ...rowIn(broadcast, 3n), url: 4 },
      rowIn(broadcast, 5n),
    ];
    const { file, refused } = await writeBatchRows(broadcast, rows);
    expect(await readBatch(file!)).toEqual([rows[0], rows[3]]);
    expect([...refused]).toEqual([
      [1, expect.stringMatching(/^fromId: 9223372036854775808 is out of range/)],
      [2, 'url: 4 is not text'],
    ]);
    expect(await writeBatchRows(broadcast, [rows[1]!])).toEqual({
      file: undefined,
      refused: new Map([[0, expect.any(String)]]),
    });
  });

  it("finds a row the writer refuses that the checks do not foresee, and throws a failure that is no row's", async () => {
    // INT64 (a plain Parquet type): not one the checks read, so only the writer refuses text in it.
    const model = [
      { name: 'id', column_type: 'INT64', compression: 'GZIP', bloom_filter: false },
    ] as unknown as ParquetModel;
    expect(rowProblems(model, { id: 'x' })).toEqual([]);
    const { file, refused } = await writeBatchRows(model, [{ id: 1n }, { id: 'x' }, { id: 3n }]);
    expect(await readBatch(file!)).toEqual([{ id: 1n }, { id: 3n }]);
    expect([...refused]).toEqual([[1, 'invalid value for INT64: x']]);
    // A model the writer cannot take refuses every row alike: that is thrown, not blamed on the rows.
    const unsupported = [
      { name: 'id', column_type: 'UUID', compression: 'GZIP', bloom_filter: false },
    ] as unknown as ParquetModel;
    await expect(writeBatchRows(unsupported, [{ id: 'a' }, { id: 'b' }])).rejects.toThrow(/Unsupported DSNP schema/);
  });
});
