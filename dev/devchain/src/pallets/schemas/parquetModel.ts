/**
 * Whether a parsed JSON value reads as the runtime's `ParquetModel` (a list of `ParquetColumn`) under its serde
 * rules: columns take exactly the fields name, column_type, compression, bloom_filter and an optional
 * `optional`, nothing else; enum names are upper case; column types are untagged (a plain base, string or
 * temporal type name, or an externally tagged INTEGER / DECIMAL / TIME / TIMESTAMP with its fields).
 */
export function isParquetModel(value: unknown): boolean {
  return Array.isArray(value) && value.every(isColumn);
}

const COLUMN_FIELDS = new Set(['name', 'column_type', 'compression', 'bloom_filter', 'optional']);
const COMPRESSION = new Set(['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'LZO', 'BROTLI', 'ZSTD', 'LZ4_RAW']);
const BASE_TYPES = new Set(['BOOLEAN', 'INT32', 'INT64', 'FLOAT', 'DOUBLE', 'BYTE_ARRAY', 'FIXED_LEN_BYTE_ARRAY']);
const UNIT_TYPES = new Set(['STRING', 'UUID', 'DATE', 'INTERVAL']);
const TIME_UNITS = new Set(['MILLIS', 'MICROS', 'NANOS']);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isU8 = (value: unknown) => Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 255;

function isColumn(value: unknown): boolean {
  if (!isObject(value)) return false;
  if (Object.keys(value).some((key) => !COLUMN_FIELDS.has(key))) return false;
  const optional = value.optional;
  return (
    typeof value.name === 'string' &&
    isColumnType(value.column_type) &&
    typeof value.compression === 'string' &&
    COMPRESSION.has(value.compression) &&
    typeof value.bloom_filter === 'boolean' &&
    (optional === undefined || optional === null || typeof optional === 'boolean')
  );
}

/** A struct variant's fields (serde structs here do not deny unknown fields). */
const TAGGED: Record<string, (fields: Record<string, unknown>) => boolean> = {
  INTEGER: (f) => isU8(f.bit_width) && typeof f.sign === 'boolean',
  DECIMAL: (f) => isU8(f.scale) && isU8(f.precision),
  TIME: (f) => typeof f.is_adjusted_to_utc === 'boolean' && TIME_UNITS.has(f.unit as string),
  TIMESTAMP: (f) => typeof f.is_adjusted_to_utc === 'boolean' && TIME_UNITS.has(f.unit as string),
};

function isColumnType(value: unknown): boolean {
  if (typeof value === 'string') return BASE_TYPES.has(value) || UNIT_TYPES.has(value);
  if (!isObject(value)) return false;
  const keys = Object.keys(value);
  if (keys.length !== 1) return false;
  const check = TAGGED[keys[0] as string];
  const fields = value[keys[0] as string];
  return check !== undefined && isObject(fields) && check(fields);
}
