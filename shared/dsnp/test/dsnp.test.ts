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
  parseDsnpContentUri,
  readBatch,
  writeBatch,
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
});
