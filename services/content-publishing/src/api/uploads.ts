import busboy, { type Busboy, type FileInfo } from 'busboy';
import type { Request, RequestHandler } from 'express';
import type { Readable } from 'node:stream';
import { badRequest, closeAfterAnswer, HttpError, serviceUnavailable, type Logger } from '@frequency-gateway/platform';
import { ContentTooLargeError, type ContentStore, type StoredContent } from '@frequency-gateway/storage';
import { z } from 'zod';
import type { AssetCatalog } from './assets.js';

/** What one multipart upload request may carry; each is a configuration variable, named in the refusals. */
export interface UploadLimits {
  /** Largest file, in bytes (FILE_UPLOAD_MAX_SIZE_IN_BYTES). */
  maxFileBytes: number;
  /** Most file parts (FILE_UPLOAD_COUNT_LIMIT). */
  maxFiles: number;
  /** Most text fields (FILE_UPLOAD_FIELD_COUNT_LIMIT). */
  maxFields: number;
  /** Longest text field value, in bytes (FILE_UPLOAD_FIELD_MAX_SIZE_IN_BYTES). */
  maxFieldBytes: number;
}

/**
 * Room for a part's headers and boundary on top of a text field's value. Bytes outside file parts (the preamble,
 * part headers, text fields, the epilogue) beyond this and the field limit since the last part began mean a
 * body that is not what an upload looks like: it is refused there instead of read to its end.
 */
const PART_OVERHEAD_BYTES = 64 * 1024;

interface ReceivedPart {
  /** Position among the request's file parts. */
  index: number;
  filename: string | undefined;
  mimeType: string;
}

/** A file part of an upload: in the store but not kept yet, or refused (a type the route does not take). */
export type ReceivedFile = (ReceivedPart & { stored: StoredContent }) | (ReceivedPart & { refused: string });

export type StoredFile = Extract<ReceivedFile, { stored: StoredContent }>;

export const isStored = (file: ReceivedFile): file is StoredFile => 'stored' in file;

/** Where a file is in the request, as messages name it: `body.files.2 ("cat.png")`. */
export const fileLabel = (file: { index: number; filename: string | undefined }) =>
  `body.files.${file.index}${file.filename ? ` (${JSON.stringify(file.filename)})` : ''}`;

/** Each refused file, named with why: `body.files.1 ("a.txt"): Unsupported file type (text/plain)`. */
export const refusals = (files: readonly ReceivedFile[]) =>
  files.flatMap((file) => ('refused' in file ? [`${fileLabel(file)}: ${file.refused}`] : []));

const received = new WeakMap<Request, ReceivedFile[]>();

/** The file parts the upload middleware received for this request, in order. */
export function receivedFiles(request: Request): ReceivedFile[] {
  return received.get(request) ?? [];
}

const isMultipart = (request: Request) => /^multipart\/form-data\s*(;|$)/i.test(request.headers['content-type'] ?? '');

/**
 * Multipart uploads, bounded while they stream: each allowed file part goes into the content store as it arrives
 * (never a whole file in memory) without being kept; the route keeps what it accepts (`keep`). A request that
 * crosses a limit is answered at once (413 for a file too large, 400 for too many files, fields or parts or a
 * field too long) and the rest of its body is not read: the connection closes after the answer. Nothing of a
 * refused request is kept.
 */
export class Uploads {
  constructor(
    private readonly store: ContentStore,
    private readonly catalog: AssetCatalog,
    private readonly limits: UploadLimits,
  ) {}

  /** The middleware of a route whose files must be of `mimeTypes`; other files are refused one by one. */
  receive(mimeTypes: RegExp): RequestHandler {
    return (request, _response, next) => {
      if (!isMultipart(request)) return next(badRequest('body: send the files as multipart/form-data'));
      let parser: Busboy;
      try {
        parser = busboy({
          headers: request.headers,
          // busboy reports a size limit when it is reached, a count limit when it is exceeded: one more byte each.
          limits: {
            fileSize: this.limits.maxFileBytes + 1,
            files: this.limits.maxFiles,
            fields: this.limits.maxFields,
            fieldSize: this.limits.maxFieldBytes + 1,
            parts: this.limits.maxFiles + this.limits.maxFields + 1,
          },
        });
      } catch (error) {
        return next(badRequest(`body: not a multipart/form-data body (${(error as Error).message})`));
      }
      new Reception(request, parser, this.store, this.limits, mimeTypes, next).start();
    };
  }

  /**
   * Keeps the files a route accepted: pinned in the store and recorded as assets that content may reference.
   * 503 when the store or Redis does not take them (the cause is logged); the client may send them again.
   */
  async keep(files: readonly StoredFile[], log: Logger): Promise<void> {
    try {
      await Promise.all(files.map((file) => this.store.pin(file.stored.cid)));
      await Promise.all(files.map((file) => this.catalog.save(file.stored, file.mimeType)));
    } catch (error) {
      log.error({ err: error, cids: files.map((file) => file.stored.cid) }, 'uploaded files could not be kept');
      throw serviceUnavailable(
        'body.files: the files could not be kept (content store or Redis unavailable); try again',
      );
    }
  }
}

/** One multipart request as it streams in. */
class Reception {
  private readonly files: (ReceivedFile | undefined)[] = [];
  private readonly fields = new Map<string, string[]>();
  private readonly adds: Promise<void>[] = [];
  private readonly abort = new AbortController();
  private readonly maxLooseBytes: number;
  /** Bytes read since the last part began or file ended, outside any file part. */
  private looseBytes = 0;
  private openFiles = 0;
  private partSeen = false;
  private settled = false;

  constructor(
    private readonly request: Request,
    private readonly parser: Busboy,
    private readonly store: ContentStore,
    private readonly limits: UploadLimits,
    private readonly mimeTypes: RegExp,
    private readonly next: (error?: unknown) => void,
  ) {
    this.maxLooseBytes = limits.maxFieldBytes + PART_OVERHEAD_BYTES;
  }

  start(): void {
    const { parser, request, limits } = this;
    parser.on('file', (_name, stream, info) => this.file(stream, info));
    parser.on('field', (name: string | undefined, value, info) => {
      this.partBegins();
      // busboy gives no name when the part's Content-Disposition has none.
      if (name === undefined) return this.refuse(badRequest('body: a text field without a name'));
      if (info.valueTruncated)
        return this.refuse(
          badRequest(
            `body.${name.slice(0, 100)}: is longer than ${limits.maxFieldBytes} bytes, the most a text field may have (FILE_UPLOAD_FIELD_MAX_SIZE_IN_BYTES)`,
          ),
        );
      this.fields.set(name, [...(this.fields.get(name) ?? []), value]);
    });
    parser.on('filesLimit', () =>
      this.refuse(
        badRequest(
          `body.files: more than ${limits.maxFiles} files in one request, the most it may carry (FILE_UPLOAD_COUNT_LIMIT)`,
        ),
      ),
    );
    parser.on('fieldsLimit', () =>
      this.refuse(
        badRequest(
          `body: more than ${limits.maxFields} text fields in one request, the most it may carry (FILE_UPLOAD_FIELD_COUNT_LIMIT)`,
        ),
      ),
    );
    parser.on('partsLimit', () =>
      this.refuse(
        badRequest(
          `body: more than ${limits.maxFiles + limits.maxFields} parts in one request (FILE_UPLOAD_COUNT_LIMIT files and FILE_UPLOAD_FIELD_COUNT_LIMIT text fields)`,
        ),
      ),
    );
    parser.on('error', (error: Error) =>
      this.refuse(badRequest(`body: malformed multipart/form-data (${error.message})`)),
    );
    parser.on('close', () => void this.complete().catch((error: unknown) => this.next(error)));
    // Counted before the parser sees each chunk (this listener comes first).
    request.on('data', this.count);
    // The client went away: stop, keep nothing, answer no one.
    request.on('close', () => {
      if (!request.complete && !this.settled) this.stop();
    });
    request.pipe(parser);
  }

  private readonly count = (chunk: Buffer) => {
    if (this.openFiles > 0) return;
    this.looseBytes += chunk.length;
    if (this.looseBytes <= this.maxLooseBytes) return;
    this.refuse(
      badRequest(
        this.partSeen
          ? `body: more than ${this.maxLooseBytes} bytes outside file parts in a row (a text field longer than FILE_UPLOAD_FIELD_MAX_SIZE_IN_BYTES, or data between parts)`
          : `body: no multipart/form-data part begins within the first ${this.maxLooseBytes} bytes`,
      ),
    );
  };

  private partBegins(): void {
    this.partSeen = true;
    this.looseBytes = 0;
  }

  private file(stream: Readable, info: FileInfo): void {
    this.partBegins();
    this.openFiles++;
    stream.once('end', () => {
      this.openFiles--;
      this.looseBytes = 0;
    });
    const part: ReceivedPart = { index: this.files.length, filename: info.filename, mimeType: info.mimeType };
    this.files.push(undefined);
    const tooLarge = () =>
      this.refuse(
        new HttpError(413, [
          `${fileLabel(part)}: is larger than ${this.limits.maxFileBytes} bytes, the most one file may have (FILE_UPLOAD_MAX_SIZE_IN_BYTES)`,
        ]),
      );
    // Also while a refused file is skipped: no file is read past the size limit.
    stream.once('limit', tooLarge);
    if (!this.mimeTypes.test(info.mimeType)) {
      this.files[part.index] = { ...part, refused: `Unsupported file type (${info.mimeType})` };
      stream.resume();
      return;
    }
    const added = this.store
      .add(stream, { maxBytes: this.limits.maxFileBytes, pin: false, signal: this.abort.signal })
      .then(
        (stored) => {
          this.files[part.index] = { ...part, stored };
        },
        (error: unknown) => {
          if (this.settled) return;
          if (error instanceof ContentTooLargeError) return tooLarge();
          this.request.log.error({ err: error, file: fileLabel(part) }, 'the content store refused an uploaded file');
          this.refuse(
            serviceUnavailable(
              `${fileLabel(part)}: the content store could not take the file; nothing of the request was kept; try again`,
            ),
          );
        },
      );
    this.adds.push(added);
  }

  /** Every part is in: the route decides what to keep. */
  private async complete(): Promise<void> {
    await Promise.all(this.adds);
    if (this.settled) return;
    this.settled = true;
    this.request.off('data', this.count);
    const files = this.files.filter((file) => file !== undefined);
    received.set(this.request, files);
    // Every text field is a list (a field may repeat, as schemaId does, one per file).
    const body: Record<string, unknown> = Object.fromEntries(this.fields);
    // `files` names the file parts (never a text field of that name), so the route's schema can require them.
    delete body.files;
    if (files.length > 0) body.files = files.map((file) => file.filename ?? '');
    this.request.body = body;
    this.next();
  }

  /** Stops reading the body and abandons what was stored of it (never pinned, never recorded). */
  private stop(): void {
    this.settled = true;
    this.abort.abort();
    this.request.off('data', this.count);
    this.request.unpipe(this.parser);
    this.request.pause();
    this.parser.removeAllListeners();
    // A late parser error after the request was answered has no one to go to.
    this.parser.on('error', () => undefined);
    // Not from inside the parser's own callback.
    setImmediate(() => this.parser.destroy());
  }

  /** Answers at once; the connection closes after the answer unless the whole body had been read. */
  private refuse(error: HttpError): void {
    if (this.settled) return;
    this.stop();
    if (this.request.complete) return this.next(error);
    closeAfterAnswer(this.request);
    this.next(new HttpError(error.statusCode, error.messages, { ...error.headers, connection: 'close' }));
  }
}

/** The `files` field of a multipart body: one part per file, each with its own Content-Type. */
export const fileParts = (description: string) =>
  z
    .array(z.string().meta({ format: 'binary' }))
    .min(1, 'must carry at least one file')
    .meta({ description });

/** The answers every upload route gives when a request is refused as a whole (nothing of it is kept). */
export const UPLOAD_REFUSALS = {
  400: {
    description:
      'Not a multipart/form-data body, no file part, more files (FILE_UPLOAD_COUNT_LIMIT), text fields (FILE_UPLOAD_FIELD_COUNT_LIMIT) or parts than allowed, a text field too long (FILE_UPLOAD_FIELD_MAX_SIZE_IN_BYTES), or a malformed body; nothing was kept',
  },
  413: {
    description:
      'A file is larger than FILE_UPLOAD_MAX_SIZE_IN_BYTES: refused as soon as it crosses the limit (the rest is not read, the connection closes); nothing was kept',
  },
  503: { description: 'The content store or Redis did not take the files; nothing was accepted; try again' },
} as const;
