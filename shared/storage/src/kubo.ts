import { randomUUID } from 'node:crypto';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { inSpan, SpanKind } from '@frequency-gateway/platform';
import { create, type KuboRPCClient } from 'kubo-rpc-client';
import { ContentTooLargeError, StreamMeter, dsnpHash, parseCid } from './hash.js';
import {
  ContentNotFoundError,
  IMPORT_PARAMETERS,
  asChunks,
  type AddOptions,
  type ContentStore,
  type ReadOptions,
  type StoredContent,
} from './contentStore.js';

export interface KuboStoreOptions {
  /** The RPC API, e.g. http://ipfs:5001 (IPFS_ENDPOINT). */
  url: string;
  /** Basic auth for a protected RPC API. */
  basicAuth?: { username: string; password: string };
}

/** A Kubo node through its RPC API, adding with the same parameters as the embedded store. */
export class KuboStore implements ContentStore {
  readonly target: string;
  private readonly client: KuboRPCClient;
  private readonly url: string;
  private readonly headers: Record<string, string>;

  constructor(options: KuboStoreOptions) {
    const url = new URL(options.url);
    this.target = `${url.protocol}//${url.host}`;
    const headers: Record<string, string> = {};
    if (options.basicAuth) {
      const token = Buffer.from(`${options.basicAuth.username}:${options.basicAuth.password}`).toString('base64');
      headers.authorization = `Basic ${token}`;
    }
    // No overall timeout: a 1 GiB upload may take long. Callers pass signals for their own deadlines.
    this.url = options.url.replace(/\/+$/, '');
    this.headers = headers;
    this.client = create({ url: options.url, headers });
  }

  /**
   * Streams the content to `/api/v0/add` as a multipart body written on the fly (the RPC client would buffer
   * the whole body first), so memory stays flat whatever the size.
   */
  async add(source: AsyncIterable<Uint8Array> | Uint8Array, options: AddOptions = {}): Promise<StoredContent> {
    const meter = new StreamMeter(options.maxBytes ?? Number.POSITIVE_INFINITY);
    let added: AddedEntry[];
    try {
      added = await this.rpcAdd([meter.measure(asChunks(source))], {
        pin: options.pin ?? true,
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (error) {
      if (meter.exceeded) throw new ContentTooLargeError(options.maxBytes as number);
      throw error;
    }
    // One JSON object per line; the last names the root.
    return { cid: cidOf(added.at(-1)), size: meter.size, dsnpHash: meter.dsnpHash() };
  }

  /**
   * One `/api/v0/add` call with a part per content, wrapped in a directory: the directory is the one pin that
   * keeps them all (a pin each would cost Kubo far more than the adding).
   */
  async addAll(contents: readonly Uint8Array[], options: { signal?: AbortSignal } = {}): Promise<StoredContent[]> {
    if (contents.length === 0) return [];
    const added = await this.rpcAdd(
      contents.map((content) => asChunks(content)),
      { wrap: true, ...(options.signal ? { signal: options.signal } : {}) },
    );
    // Parts are named by their index; Kubo answers a line per file, named as its part, then the directory.
    const byName = new Map(added.map((entry) => [entry.Name, entry]));
    return contents.map((content, index) => ({
      cid: cidOf(byName.get(String(index))),
      size: content.byteLength,
      dsnpHash: dsnpHash(content),
    }));
  }

  private async rpcAdd(
    parts: AsyncIterable<Uint8Array>[],
    options: { wrap?: boolean; pin?: boolean; signal?: AbortSignal },
  ): Promise<AddedEntry[]> {
    const boundary = `----gateway-${randomUUID()}`;
    const encoder = new TextEncoder();
    async function* body(): AsyncGenerator<Uint8Array> {
      for (const [index, part] of parts.entries()) {
        yield encoder.encode(
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${index}"\r\n` +
            'Content-Type: application/octet-stream\r\n\r\n',
        );
        yield* part;
        yield encoder.encode('\r\n');
      }
      yield encoder.encode(`--${boundary}--\r\n`);
    }
    const query = new URLSearchParams({
      'cid-version': String(IMPORT_PARAMETERS.cidVersion),
      'raw-leaves': String(IMPORT_PARAMETERS.rawLeaves),
      chunker: `size-${IMPORT_PARAMETERS.chunkSize}`,
      hash: IMPORT_PARAMETERS.hashAlg,
      pin: String(options.pin ?? true),
      progress: 'false',
      'wrap-with-directory': String(options.wrap ?? false),
    });
    const text = await inSpan('ipfs add', { kind: SpanKind.CLIENT, attributes: { 'ipfs.parts': parts.length } }, () =>
      postStream(`${this.url}/api/v0/add?${query}`, body(), {
        headers: { ...this.headers, 'content-type': `multipart/form-data; boundary=${boundary}` },
        ...(options.signal ? { signal: options.signal } : {}),
      }),
    );
    return text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as AddedEntry);
  }

  async *read(cid: string, options: ReadOptions = {}): AsyncIterable<Uint8Array> {
    const parsed = parseCid(cid);
    if (!parsed) throw new ContentNotFoundError(cid);
    yield* this.client.cat(parsed, {
      ...(options.offset === undefined ? {} : { offset: options.offset }),
      ...(options.length === undefined ? {} : { length: options.length }),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }

  async stat(cid: string, options: { signal?: AbortSignal } = {}): Promise<{ cid: string; size: number } | undefined> {
    const parsed = parseCid(cid);
    if (!parsed) return undefined;
    try {
      // offline: answer from local blocks only, never wait on the network for a CID we do not have.
      const stat = await inSpan('ipfs stat', { kind: SpanKind.CLIENT, attributes: { 'ipfs.cid': cid } }, () =>
        this.client.files.stat(`/ipfs/${parsed.toString()}`, {
          offline: true,
          ...(options.signal ? { signal: options.signal } : {}),
        } as Parameters<KuboRPCClient['files']['stat']>[1]),
      );
      return { cid: parsed.toString(), size: Number(stat.size) };
    } catch {
      return undefined;
    }
  }

  async exists(cid: string, options: { signal?: AbortSignal } = {}): Promise<boolean> {
    return (await this.stat(cid, options)) !== undefined;
  }

  async pin(cid: string, options: { signal?: AbortSignal } = {}): Promise<void> {
    const parsed = parseCid(cid);
    if (!parsed) throw new ContentNotFoundError(cid);
    await inSpan('ipfs pin', { kind: SpanKind.CLIENT, attributes: { 'ipfs.cid': cid } }, () =>
      this.client.pin.add(parsed, options.signal ? { signal: options.signal } : {}),
    );
  }

  async probe(signal: AbortSignal): Promise<void> {
    await this.client.version({ signal });
  }
}

/** A line of Kubo's answer to `/api/v0/add`. */
interface AddedEntry {
  Name: string;
  Hash: string;
}

function cidOf(entry: AddedEntry | undefined): string {
  const cid = entry && parseCid(entry.Hash);
  if (!cid) throw new Error(`IPFS add answered no valid CID: ${JSON.stringify(entry)}`);
  return cid.toString();
}

/**
 * POSTs a streamed body with backpressure (the next chunk is produced only once the socket took the last one)
 * and resolves with the response text; rejects on a non-2xx status.
 */
async function postStream(
  url: string,
  body: AsyncIterable<Uint8Array>,
  options: { headers: Record<string, string>; signal?: AbortSignal },
): Promise<string> {
  const target = new URL(url);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  const request = send(target, {
    method: 'POST',
    headers: { ...options.headers, 'transfer-encoding': 'chunked' },
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const answered = new Promise<IncomingMessage>((resolve, reject) => {
    request.once('response', resolve);
    request.once('error', reject);
  });
  // When the body fails (e.g. over its limit) the request errors too; that error is the body's consequence.
  answered.catch(() => undefined);
  await pipeline(Readable.from(body), request);
  const response = await answered;
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  const status = response.statusCode ?? 0;
  if (status < 200 || status >= 300) throw new Error(`IPFS add failed (${status}): ${text.slice(0, 300)}`);
  return text;
}
