import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startKubo, type LocalKubo } from '@frequency-gateway/devstack';
import {
  ContentTooLargeError,
  EmbeddedStore,
  contentId,
  KuboStore,
  dsnpHash,
  isDsnpHash,
  publicUrl,
  serveGateway,
  type ContentStore,
} from '../src/index.js';

/** Deterministic pseudo-random bytes (so CIDs are comparable across stores and runs). */
function bytesOf(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  let block = createHash('sha256').update(String(seed)).digest();
  for (let at = 0; at < length; at += block.length) {
    out.set(block.subarray(0, Math.min(block.length, length - at)), at);
    block = createHash('sha256').update(block).digest();
  }
  return out;
}

/** Splits bytes into uneven chunks, as a network stream arrives. */
async function* streamed(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  for (let at = 0, step = 1; at < bytes.length; at += step, step = ((step * 7 + 13) % 99_991) + 1)
    yield bytes.subarray(at, Math.min(at + step, bytes.length));
}

async function collect(source: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of source) chunks.push(chunk);
  return Buffer.concat(chunks);
}

describe('content stores', () => {
  let kubo: LocalKubo;
  let dir: string;
  let stores: Record<'embedded' | 'kubo', ContentStore>;
  beforeAll(async () => {
    kubo = await startKubo();
    dir = mkdtempSync(join(tmpdir(), 'storage-test-'));
    stores = { embedded: new EmbeddedStore(dir), kubo: new KuboStore({ url: kubo.apiUrl }) };
  }, 60_000);
  afterAll(async () => {
    await stores?.embedded.close?.();
    await kubo?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(['embedded', 'kubo'] as const)(
    '%s: adds, reads, stats and pins content, with its DSNP hash',
    async (name) => {
      const store = stores[name];
      const bytes = bytesOf(100_000, 1);
      const stored = await store.add(streamed(bytes));
      expect(stored.cid).toMatch(/^bafkrei/);
      expect(stored.size).toBe(100_000);
      expect(stored.dsnpHash).toBe(dsnpHash(bytes));
      expect(isDsnpHash(stored.dsnpHash)).toBe(true);
      expect((await collect(store.read(stored.cid))).equals(Buffer.from(bytes))).toBe(true);
      expect(await collect(store.read(stored.cid, { offset: 10, length: 5 }))).toEqual(
        Buffer.from(bytes.subarray(10, 15)),
      );
      expect(await store.stat(stored.cid)).toEqual({ cid: stored.cid, size: 100_000 });
      expect(await store.exists(stored.cid)).toBe(true);
      await store.pin(stored.cid);
      await store.probe(AbortSignal.timeout(5_000));
      const absent = (await store.add(bytesOf(10, 99))).cid.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a'));
      expect(await store.exists(absent)).toBe(false);
      expect(await store.stat('not-a-cid')).toBeUndefined();
    },
  );

  it.each(['embedded', 'kubo'] as const)('%s: an add whose signal aborts stops reading its source', async (name) => {
    const controller = new AbortController();
    let read = 0;
    async function* endless(): AsyncGenerator<Uint8Array> {
      for (;;) {
        read++;
        // Aborted once a megabyte has gone in: the store must stop asking for more.
        if (read === 16) controller.abort(new Error('the client went away'));
        yield bytesOf(64 * 1024, read);
      }
    }
    await expect(stores[name].add(endless(), { signal: controller.signal })).rejects.toThrow();
    expect(read).toBeLessThan(64);
  });

  it('Kubo: adds without pinning when asked, and keeps the content once pinned', async () => {
    const pinType = async (cid: string) => {
      const answer = await fetch(`${kubo.apiUrl}/api/v0/pin/ls?arg=${cid}&type=recursive`, { method: 'POST' });
      return ((await answer.json()) as { Keys?: Record<string, { Type: string }> }).Keys?.[cid]?.Type;
    };
    const bytes = bytesOf(300_000, 30);
    const stored = await stores.kubo.add(streamed(bytes), { pin: false });
    expect(await stores.kubo.exists(stored.cid)).toBe(true);
    expect(await pinType(stored.cid)).toBeUndefined();
    await stores.kubo.pin(stored.cid);
    expect(await pinType(stored.cid)).toBe('recursive');
    const pinned = await stores.kubo.add(bytesOf(1_000, 31));
    expect(await pinType(pinned.cid)).toBe('recursive');
  });

  it('both make the same CID from the same bytes, across chunk and DAG-level boundaries', async () => {
    const sizes = [1, 262_144, 262_145, 3_000_000, 174 * 262_144 + 1];
    for (const [index, size] of sizes.entries()) {
      const bytes = bytesOf(size, 10 + index);
      const [embedded, viaKubo] = await Promise.all([
        stores.embedded.add(streamed(bytes)),
        stores.kubo.add(streamed(bytes)),
      ]);
      expect({ size, cid: embedded.cid }).toEqual({ size, cid: viaKubo.cid });
      expect(embedded.dsnpHash).toBe(viaKubo.dsnpHash);
    }
  }, 120_000);

  it('both add many contents at once as if each were added alone, in order; Kubo keeps each', async () => {
    // Repeats, an empty one and one over a chunk: each keeps its own CID and hash, whatever its neighbours.
    const contents = [bytesOf(300, 20), bytesOf(300, 21), bytesOf(300, 20), new Uint8Array(0), bytesOf(300_000, 22)];
    const [embedded, viaKubo] = await Promise.all([stores.embedded.addAll(contents), stores.kubo.addAll(contents)]);
    const alone = await Promise.all(contents.map((content) => stores.embedded.add(content)));
    expect(embedded).toEqual(alone);
    expect(viaKubo).toEqual(alone);
    expect(alone.map((stored) => stored.size)).toEqual([300, 300, 300, 0, 300_000]);
    expect(alone[0]?.cid).toBe(alone[2]?.cid);
    expect(new Set(alone.map((stored) => stored.cid)).size).toBe(4);
    // Kept through the one directory pinned around them.
    for (const stored of viaKubo) {
      const pinned = await fetch(`${kubo.apiUrl}/api/v0/pin/ls?arg=${stored.cid}&type=all`, { method: 'POST' });
      const keys = ((await pinned.json()) as { Keys: Record<string, { Type: string }> }).Keys;
      expect(keys[stored.cid]?.Type).toMatch(/^(recursive|indirect)/);
    }
    for (const stored of viaKubo) expect(await collect(stores.kubo.read(stored.cid))).toHaveLength(stored.size);
    expect(await stores.kubo.addAll([])).toEqual([]);
  });

  it('works out the CID a store gives content without a store, on both sides of the chunk size', async () => {
    for (const [index, size] of [0, 1, 262_144, 262_145, 1_000_000].entries()) {
      const bytes = bytesOf(size, 30 + index);
      const stored = await stores.embedded.add(bytes);
      expect({ size, cid: await contentId(bytes) }).toEqual({ size, cid: stored.cid });
    }
  });

  it.each(['embedded', 'kubo'] as const)('%s: refuses content over the byte limit', async (name) => {
    await expect(stores[name].add(streamed(bytesOf(10_001, 3)), { maxBytes: 10_000 })).rejects.toBeInstanceOf(
      ContentTooLargeError,
    );
    const exact = await stores[name].add(streamed(bytesOf(10_000, 3)), { maxBytes: 10_000 });
    expect(exact.size).toBe(10_000);
  });

  it('serves the embedded store over HTTP at /ipfs/{cid}', async () => {
    const gateway = await serveGateway(stores.embedded);
    try {
      const bytes = bytesOf(300_000, 4);
      const { cid } = await stores.embedded.add(bytes);
      const response = await fetch(`${gateway.url}/ipfs/${cid}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-length')).toBe('300000');
      expect(Buffer.from(await response.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true);
      expect((await fetch(`${gateway.url}/ipfs/${cid}`, { method: 'HEAD' })).status).toBe(200);
      expect((await fetch(`${gateway.url}/ipfs/not-a-cid`)).status).toBe(400);
      expect(
        (await fetch(`${gateway.url}/ipfs/bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy`)).status,
      ).toBe(404);
      expect((await fetch(`${gateway.url}/elsewhere`)).status).toBe(404);
    } finally {
      await gateway.close();
    }
  });

  it('builds public URLs from a gateway template', () => {
    expect(publicUrl('https://ipfs.io/ipfs/[CID]', 'bafy1')).toBe('https://ipfs.io/ipfs/bafy1');
    expect(publicUrl('https://[CID].ipfs.dweb.link', 'bafy1')).toBe('https://bafy1.ipfs.dweb.link');
    expect(publicUrl('http://localhost:8080/', 'bafy1')).toBe('http://localhost:8080/ipfs/bafy1');
  });
});
