import { Writable } from 'node:stream';
import { ParquetReader, ParquetWriter } from '@dsnp/parquetjs';
import { AnnouncementType as DsnpAnnouncementType, descriptorForAnnouncementType } from '@dsnp/schemas';
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

type Column = ParquetModel[number];
type IntegerType = { bit_width: number; sign: boolean };

const integerTypeOf = (column: Column): IntegerType | undefined =>
  typeof column.column_type === 'object' && 'INTEGER' in column.column_type ? column.column_type.INTEGER : undefined;

/**
 * The values the writer can store in an integer column. An unsigned column is stored in the signed physical
 * integer of its size (32 or 64 bits; the writer encodes with the sign), so an unsigned 64-bit column holds at
 * most 2^63 − 1, not 2^64 − 1, and an unsigned 32-bit one at most 2^31 − 1.
 */
export function integerRange({ bit_width: bits, sign }: IntegerType): { min: bigint; max: bigint; stored: string } {
  if (sign)
    return { min: -(2n ** BigInt(bits - 1)), max: 2n ** BigInt(bits - 1) - 1n, stored: `a signed ${bits}-bit integer` };
  const physical = bits <= 32 ? 32 : 64;
  const own = 2n ** BigInt(bits) - 1n;
  const signedMax = 2n ** BigInt(physical - 1) - 1n;
  return own <= signedMax
    ? { min: 0n, max: own, stored: `an unsigned ${bits}-bit integer` }
    : { min: 0n, max: signedMax, stored: `a signed ${physical}-bit integer` };
}

/** The DSNP announcement models of @dsnp/schemas (the legacy profile model, only in genesis, has the same fromId). */
const ANNOUNCEMENT_MODELS = [
  DsnpAnnouncementType.Tombstone,
  DsnpAnnouncementType.Broadcast,
  DsnpAnnouncementType.Reply,
  DsnpAnnouncementType.Reaction,
  DsnpAnnouncementType.Update,
].map((type) => descriptorForAnnouncementType(type).parquetSchema as ParquetModel);

/**
 * The largest user id (`fromId`) every announcement model's file holds: 2^63 − 1, though MSA ids are u64 on
 * chain, because the writer stores the unsigned 64-bit column as a signed 64-bit integer.
 */
export const MAX_ANNOUNCED_USER_ID: bigint = ANNOUNCEMENT_MODELS.map((model) => {
  const fromId = model.find((column) => column.name === 'fromId');
  const type = fromId && integerTypeOf(fromId);
  if (!type) throw new Error('a DSNP announcement model has no integer fromId column');
  return integerRange(type).max;
}).reduce((least, max) => (max < least ? max : least));

/** A value as a problem names it: at most 40 characters of a string, number or bigint; the type of another. */
const shown = (value: unknown): string => {
  if (!['string', 'number', 'bigint', 'boolean'].includes(typeof value)) return `(${typeof value})`;
  const text = String(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
};

const asBigInt = (value: unknown): bigint | undefined => {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  return undefined;
};

function columnProblem(column: Column, value: unknown): string | undefined {
  if (value === undefined || value === null) return 'is missing';
  const integer = integerTypeOf(column);
  if (integer) {
    const { min, max, stored } = integerRange(integer);
    const number = asBigInt(value);
    if (number === undefined) return `${shown(value)} is not an integer`;
    if (number < min || number > max)
      return `${number} is out of range: must be from ${min} to ${max} (the file stores it as ${stored})`;
    return undefined;
  }
  if (column.column_type === 'STRING' && typeof value !== 'string') return `${shown(value)} is not text`;
  if (column.column_type === 'BYTE_ARRAY' && typeof value !== 'string' && !(value instanceof Uint8Array))
    return `${shown(value)} is neither text nor bytes`;
  return undefined;
}

/**
 * What keeps a row out of a file in the model, column by column (`<column>: <problem>`; none when the writer
 * takes it): a missing value, text where an integer goes, an integer out of its column's range (see
 * integerRange), a number where text goes. Column types other than integers, STRING and BYTE_ARRAY are left to
 * the writer (writeBatchRows finds a row it refuses all the same).
 */
export function rowProblems(model: ParquetModel, row: Record<string, unknown>): string[] {
  return model.flatMap((column) => {
    const problem = columnProblem(column, row[column.name]);
    return problem === undefined ? [] : [`${column.name}: ${problem}`];
  });
}

/** A batch file of the rows the writer takes, and why each other row was left out (by its index in `rows`). */
export interface WrittenRows {
  /** Undefined when no row was left to write. */
  file: Buffer | undefined;
  refused: Map<number, string>;
}

/** Why the writer refuses a row written alone, or undefined when it takes it. */
async function refusalAlone(model: ParquetModel, row: Record<string, unknown>): Promise<string | undefined> {
  try {
    await writeBatch(model, [row]);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/**
 * Writes one batch file of the rows that fit the model, so that one row cannot fail the file: a row with
 * rowProblems is left out, with them as the reason. Should the writer still fail, each row is written alone and
 * those it refuses are left out too; when it refuses none of them alone, or every one (the model, not the
 * rows), the failure is not a row's and is thrown.
 */
export async function writeBatchRows(model: ParquetModel, rows: Record<string, unknown>[]): Promise<WrittenRows> {
  const refused = new Map<number, string>();
  rows.forEach((row, index) => {
    const problems = rowProblems(model, row);
    if (problems.length > 0) refused.set(index, problems.join('; '));
  });
  const kept = () => rows.filter((_, index) => !refused.has(index));
  if (kept().length === 0) return { file: undefined, refused };
  try {
    return { file: await writeBatch(model, kept()), refused };
  } catch (error) {
    const alone = new Map<number, string>();
    for (const [index, row] of rows.entries()) {
      const refusal = refused.has(index) ? undefined : await refusalAlone(model, row);
      if (refusal !== undefined) alone.set(index, refusal);
    }
    if (alone.size === 0 || alone.size === kept().length) throw error;
    for (const [index, reason] of alone) refused.set(index, reason);
    return { file: await writeBatch(model, kept()), refused };
  }
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
