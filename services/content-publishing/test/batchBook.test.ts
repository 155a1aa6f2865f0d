import { startRedisServer, type LocalRedis } from '@frequency-gateway/devstack';
import { AnnouncementType } from '@frequency-gateway/dsnp';
import { Redis } from 'ioredis';
import { BatchBook } from '../src/worker/batch/book.js';
import type { Acceptance, Announcement } from '../src/jobs/batch.js';
import { batchMembershipSeconds, publicationSeconds } from '../src/worker/retention.js';

// The batch stage's Redis scripts (join.lua, withdraw.lua, close.lua, with membership.lua) on a real Redis: the
// one decision between a request failing in the document stage and its row being published with its batch.
describe('the batch book: joining, withdrawing and closing', () => {
  let server: LocalRedis;
  let redis: Redis;
  let book: BatchBook;
  let schemaId = 100;

  beforeAll(async () => {
    server = await startRedisServer();
    redis = new Redis(server.url);
    book = new BatchBook(redis, 'book', { maxRows: 3 });
  });
  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });
  // Each test batches under a schema of its own, so that their batches never meet.
  beforeEach(() => void (schemaId += 1));

  const announcement = (text: string): Announcement => ({
    row: { announcementType: AnnouncementType.Reaction, fromId: '7', emoji: text, apply: 1, inReplyTo: 'dsnp://7/x' },
  });
  const accepted = (referenceId: string, at = '2026-11-25T10:00:00.000Z'): Acceptance => ({
    referenceId,
    acceptedAt: at,
  });

  it('a row joins once: its job retried joins before, and withdrawing it then leaves it to its batch', async () => {
    const joined = await book.join(schemaId, accepted('j1'), announcement('👍'));
    expect(joined).toMatchObject({ outcome: 'joined', schemaId, rows: 1, closed: false });
    const batchId = joined.outcome === 'joined' ? joined.batchId : '';

    expect(await book.join(schemaId, accepted('j1'), announcement('👍'))).toEqual({
      outcome: 'joined-before',
      batchId,
      schemaId,
    });
    // The job failed for good after its row joined: the document stage must not fail the request.
    expect(await book.withdraw(accepted('j1'))).toEqual({ outcome: 'joined', batchId });
    expect((await book.close(batchId, schemaId))?.rows.map(([referenceId]) => referenceId)).toEqual(['j1']);
  });

  it('a withdrawn acceptance never joins; the request accepted again later joins anew', async () => {
    expect(await book.withdraw(accepted('w1'))).toEqual({ outcome: 'withdrawn' });
    expect(await book.withdraw(accepted('w1'))).toEqual({ outcome: 'withdrawn' });
    // A late attempt of the failed job may not add the row of a request whose record says failed.
    expect(await book.join(schemaId, accepted('w1'), announcement('👎'))).toEqual({ outcome: 'refused' });

    const later = accepted('w1', '2026-11-25T11:00:00.000Z');
    expect(await book.join(schemaId, later, announcement('👎'))).toMatchObject({ outcome: 'joined', rows: 1 });
    // The first acceptance is stale now: neither its withdrawal nor its join touches the later one.
    expect(await book.withdraw(accepted('w1'))).toEqual({ outcome: 'superseded' });
    expect(await book.join(schemaId, accepted('w1'), announcement('👎'))).toEqual({ outcome: 'refused' });
  });

  it('the row that fills a batch closes it; the next row opens another; closing twice reads it once', async () => {
    const rows = [];
    for (const referenceId of ['f3', 'f1', 'f2'])
      rows.push(await book.join(schemaId, accepted(referenceId), announcement(referenceId)));
    expect(rows.map((joined) => (joined.outcome === 'joined' ? [joined.rows, joined.closed] : []))).toEqual([
      [1, false],
      [2, false],
      [3, true],
    ]);
    const full = rows[0]?.outcome === 'joined' ? rows[0].batchId : '';
    const next = await book.join(schemaId, accepted('f4'), announcement('f4'));
    expect(next).toMatchObject({ outcome: 'joined', rows: 1 });
    expect(next.outcome === 'joined' && next.batchId).not.toBe(full);
    expect(await book.open()).toContainEqual(
      expect.objectContaining({ schemaId, batchId: next.outcome === 'joined' ? next.batchId : '' }),
    );

    const closed = await book.close(full, schemaId);
    expect(closed?.rows.map(([referenceId]) => referenceId)).toEqual(['f1', 'f2', 'f3']);
    await book.clear(full);
    expect(await book.close(full, schemaId)).toBeUndefined();
  });

  it('a closed batch is published or failed, never both: whichever of writing and abandoning comes first decides', async () => {
    const joinedBatch = async (referenceId: string) => {
      const joined = await book.join(schemaId, accepted(referenceId), announcement(referenceId));
      return joined.outcome === 'joined' ? joined.batchId : '';
    };
    const file = { cid: 'bafkreifile', size: 321 };
    // Written first: the batch goes on to be published, its job's failure abandons nothing.
    const written = await joinedBatch('d1');
    await book.close(written, schemaId);
    expect(await book.written(written, file)).toBe(true);
    expect(await book.abandon(written)).toBe('written');
    expect(await book.close(written, schemaId)).toMatchObject({ file, rows: [['d1', expect.anything()]] });
    await book.clear(written);
    expect(await book.abandon(written)).toBe('gone');

    // Abandoned first (its requests fail): a file written afterwards is not noted, so it is not handed on.
    schemaId += 1;
    const abandoned = await joinedBatch('d2');
    await book.close(abandoned, schemaId);
    expect(await book.abandon(abandoned)).toBe('abandoned');
    expect(await book.written(abandoned, file)).toBe(false);
    expect(await book.close(abandoned, schemaId)).toMatchObject({ abandoned: true });
    expect((await book.close(abandoned, schemaId))?.file).toBeUndefined();
    await book.clear(abandoned);
    // A batch cleared before is not brought back by a late note.
    expect(await book.written(abandoned, file)).toBe(false);
    expect(await redis.exists(`book:batch:${abandoned}`)).toBe(0);
  });

  it('takes failed requests out of a closed batch, with their documents', async () => {
    const first = await book.join(schemaId, accepted('r1'), { ...announcement('r1'), document: 'doc 1' });
    await book.join(schemaId, accepted('r2'), { ...announcement('r2'), document: 'doc 2' });
    const batchId = first.outcome === 'joined' ? first.batchId : '';
    await book.close(batchId, schemaId);
    await book.remove(batchId, ['r1']);
    const closed = await book.close(batchId, schemaId);
    expect(closed?.rows.map(([referenceId]) => referenceId)).toEqual(['r2']);
    expect([...closed!.documents]).toEqual([['r2', 'doc 2']]);
  });

  it('keeps a membership as long as the request record, within its bounds (the soak counts on it)', async () => {
    const days = (n: number) => n * 24 * 3600;
    expect([600, 3600, days(30)].map(batchMembershipSeconds)).toEqual([600, 3600, days(7)]);
    expect([60, 600].map(batchMembershipSeconds)).toEqual([600, 600]);
    expect([600, 3600, days(30), days(90)].map(publicationSeconds)).toEqual([1800, 3600, days(30), days(30)]);

    const short = new BatchBook(redis, 'short', { maxRows: 3, membershipSeconds: 900 });
    await short.join(schemaId, accepted('t1'), announcement('👍'));
    const ttl = await redis.ttl('short:batch:member:t1');
    expect(ttl).toBeGreaterThan(800);
    expect(ttl).toBeLessThanOrEqual(900);
    await short.withdraw(accepted('t2'));
    expect(await redis.ttl('short:batch:member:t2')).toBeLessThanOrEqual(900);
    expect(await redis.ttl('book:batch:member:j1')).toBeGreaterThan(900);
  });
});
