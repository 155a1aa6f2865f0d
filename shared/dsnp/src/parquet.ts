import { Writable } from 'node:stream';
import { ParquetReader, ParquetWriter } from '@dsnp/parquetjs';
import { fromDSNPSchema } from '@dsnp/schemas/parquet';

/** A schema's model as published on chain: the DSNP Parquet column list (JSON). */
export type ParquetModel = Parameters<typeof fromDSNPSchema>[0];

/** Parses a model as `SchemasRuntimeApi` returns it (UTF-8 JSON bytes or text). */
export function parseParquetModel(model: Uint8Array | string): ParquetModel {
  const text = typeof model === 'string' ? model : new TextDecoder().decode(model);
  const parsed = JSON.parse(text) as unknown;
  if (!Array.isArray(parsed)) throw new Error('a Parquet model is a JSON array of columns');
  return parsed as ParquetModel;
}

/** Collects what the Parquet writer emits into one buffer. */
class BufferSink extends Writable {
  private readonly chunks: Buffer[] = [];

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.chunks.push(chunk);
    callback();
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

/**
 * Writes announcement rows as one Parquet file in a schema's model (its columns, compression and bloom
 * filters, as @dsnp/schemas maps them).
 */
export async function writeBatch(model: ParquetModel, rows: Iterable<Record<string, unknown>>): Promise<Buffer> {
  const [schema, options] = fromDSNPSchema(model);
  const sink = new BufferSink();
  // The writer only calls write() and end(), which a Writable has.
  const writer = await ParquetWriter.openStream(
    schema,
    sink as unknown as Parameters<typeof ParquetWriter.openStream>[1],
    options,
  );
  for (const row of rows) await writer.appendRow(row);
  await writer.close();
  return sink.bytes();
}

/** Reads every row of a Parquet batch file. */
export async function readBatch(file: Buffer | Uint8Array): Promise<Record<string, unknown>[]> {
  const reader = await ParquetReader.openBuffer(Buffer.isBuffer(file) ? file : Buffer.from(file));
  try {
    const cursor = reader.getCursor();
    const rows: Record<string, unknown>[] = [];
    for (let row = await cursor.next(); row; row = await cursor.next()) rows.push(row as Record<string, unknown>);
    return rows;
  } finally {
    await reader.close();
  }
}
