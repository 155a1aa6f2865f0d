import { mkdirSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { FsBlockstore } from 'blockstore-fs';
import { exporter } from 'ipfs-unixfs-exporter';
import { StreamMeter, parseCid } from './hash.js';
import {
  ContentNotFoundError,
  asChunks,
  type AddOptions,
  type ContentStore,
  type ReadOptions,
  type StoredContent,
} from './contentStore.js';
import { importFile } from './unixfs.js';

/**
 * A content store in a folder: blocks on disk (one file each, so several processes on one machine can share
 * the folder) built with the UnixFS importer under Kubo's parameters. For `make dev` and tests, when no Kubo
 * node is configured. Nothing is ever collected, so pinning only records the CID.
 */
export class EmbeddedStore implements ContentStore {
  readonly target: string;
  private readonly blocks: FsBlockstore;
  private opened: Promise<void> | undefined;

  constructor(private readonly dir: string) {
    this.target = `embedded:${dir}`;
    mkdirSync(join(dir, 'blocks'), { recursive: true });
    this.blocks = new FsBlockstore(join(dir, 'blocks'));
  }

  private open(): Promise<void> {
    this.opened ??= this.blocks.open();
    return this.opened;
  }

  async add(source: AsyncIterable<Uint8Array> | Uint8Array, options: AddOptions = {}): Promise<StoredContent> {
    await this.open();
    const meter = new StreamMeter(options.maxBytes ?? Number.POSITIVE_INFINITY);
    // The signal is checked once per chunk of the source, not handed to the importer, which checks it around
    // every block it stores (about a tenth of an upload's CPU). A source that stops sending is ended by its
    // owner (the upload's parser is destroyed when it gives up).
    options.signal?.throwIfAborted();
    const root = await importFile(meter.measure(asChunks(source), options.signal), this.blocks);
    return { cid: root.toString(), size: meter.size, dsnpHash: meter.dsnpHash() };
  }

  async addAll(contents: readonly Uint8Array[], options: { signal?: AbortSignal } = {}): Promise<StoredContent[]> {
    const stored: StoredContent[] = [];
    for (const content of contents) stored.push(await this.add(content, options));
    return stored;
  }

  async *read(cid: string, options: ReadOptions = {}): AsyncIterable<Uint8Array> {
    await this.open();
    const parsed = parseCid(cid);
    if (!parsed || !(await this.blocks.has(parsed))) throw new ContentNotFoundError(cid);
    const entry = await exporter(parsed, this.blocks, options.signal ? { signal: options.signal } : {});
    if (entry.type !== 'file' && entry.type !== 'raw') throw new ContentNotFoundError(cid);
    yield* entry.content({
      ...(options.offset === undefined ? {} : { offset: options.offset }),
      ...(options.length === undefined ? {} : { length: options.length }),
    });
  }

  async stat(cid: string): Promise<{ cid: string; size: number } | undefined> {
    await this.open();
    const parsed = parseCid(cid);
    if (!parsed || !(await this.blocks.has(parsed))) return undefined;
    const entry = await exporter(parsed, this.blocks);
    if (entry.type !== 'file' && entry.type !== 'raw') return undefined;
    return { cid: parsed.toString(), size: Number(entry.size) };
  }

  async exists(cid: string): Promise<boolean> {
    return (await this.stat(cid)) !== undefined;
  }

  async pin(cid: string): Promise<void> {
    const parsed = parseCid(cid);
    if (!parsed || !(await this.exists(cid))) throw new ContentNotFoundError(cid);
    const file = join(this.dir, 'pins.json');
    const pins = new Set<string>(existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as string[]) : []);
    pins.add(parsed.toString());
    writeFileSync(file, JSON.stringify([...pins]));
  }

  async probe(): Promise<void> {
    await this.open();
  }

  async close(): Promise<void> {
    if (this.opened) await this.blocks.close();
  }
}
