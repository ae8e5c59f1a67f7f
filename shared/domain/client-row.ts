/**
 * Rows the Spanner Node client returns (default options: `Int`, `Float`, `Float32`, `Numeric`, `PGNumeric`,
 * `PGJsonb`, `SpannerDate`, `PreciseDate`, `Buffer`, `Interval`, `ProtoMessage`, `ProtoEnum`, arrays) →
 * Storage Write JSON writer values. Each client value is first turned into the form a change-stream mod
 * carries for that column type, then mapped by `toWriterValue`, so a value read from a row and the same value
 * read from the stream map identically. Values are recognised structurally: the domain imports no client.
 */
import type { JsonValue, SpannerType } from './change-record';
import { DecodeError, describeValue, readTimestamp, structFields } from './client-values';
import { exactKeyColumn, exactKeyText, needsExactKey } from './exact-keys';
import type { TableColumn } from './information-schema';
import { formatTimestamp } from './timestamp';
import { toWriterValue, type ValueIssue, type WriterValue } from './value-mapping';

function fail(path: string, type: SpannerType, value: unknown): never {
  throw new DecodeError(path, `expected a ${type.code} client value, saw ${describeValue(value)}`);
}

/** The `.value` of the client's wrappers (`Int`, `Float`, `Numeric`, `PGJsonb`, `ProtoEnum`, …). */
function unwrap(value: unknown): unknown {
  if (typeof value === 'object' && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value)) {
    if ('value' in value) return (value as { value: unknown }).value;
  }
  return value;
}

function integerForm(value: unknown, type: SpannerType, path: string): string {
  const v = unwrap(value);
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number' && Number.isSafeInteger(v)) return String(v);
  if (typeof v === 'string' && /^-?\d+$/.test(v)) return v;
  return fail(path, type, value);
}

function floatForm(value: unknown, type: SpannerType, path: string): JsonValue {
  const v = unwrap(value);
  // The stream carries NaN and the infinities as strings; the client's `Float` holds 'NaN' as sent.
  if (typeof v === 'number') return Number.isFinite(v) ? v : String(v);
  if (typeof v === 'string' && ['NaN', 'Infinity', '-Infinity'].includes(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return fail(path, type, value);
}

function bytesForm(value: unknown, type: SpannerType, path: string): string {
  const v = unwrap(value);
  if (Buffer.isBuffer(v)) return v.toString('base64');
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (typeof v === 'string') return v;
  return fail(path, type, value);
}

function dateForm(value: unknown, type: SpannerType, path: string): string {
  if (typeof value === 'string') return value;
  // `SpannerDate#toJSON` renders the calendar date it was built from (local fields), not a UTC instant.
  if (value instanceof Date && typeof value.toJSON === 'function') {
    const text: unknown = value.toJSON();
    if (typeof text === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(text)) return text;
  }
  return fail(path, type, value);
}

function jsonForm(value: unknown): string {
  // GoogleSQL JSON arrives parsed, PG JSONB as a `PGJsonb` wrapper; the stream carries the text.
  const v =
    typeof value === 'object' && value !== null && value.constructor?.name === 'PGJsonb'
      ? unwrap(value)
      : value;
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function intervalForm(value: unknown, type: SpannerType, path: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null && 'toISO8601' in value) {
    const f = (value as { toISO8601: unknown }).toISO8601;
    if (typeof f === 'function') return String(f.call(value));
  }
  return fail(path, type, value);
}

function scalarForm(value: unknown, type: SpannerType, path: string): JsonValue {
  switch (type.code) {
    case 'BOOL':
      if (typeof value !== 'boolean') fail(path, type, value);
      return value;
    case 'INT64':
    case 'ENUM':
      return integerForm(value, type, path);
    case 'FLOAT32':
    case 'FLOAT64':
      return floatForm(value, type, path);
    case 'NUMERIC': {
      const v = unwrap(value);
      return typeof v === 'string' ? v : fail(path, type, value);
    }
    case 'STRING':
    case 'UUID': {
      const v = typeof value === 'object' && value !== null ? String(value) : value;
      return typeof v === 'string' ? v : fail(path, type, value);
    }
    case 'INTERVAL':
      return intervalForm(value, type, path);
    case 'BYTES':
    case 'PROTO':
      return bytesForm(value, type, path);
    case 'DATE':
      return dateForm(value, type, path);
    case 'TIMESTAMP':
      return formatTimestamp(readTimestamp(value, path));
    case 'JSON':
      return jsonForm(value);
    default:
      throw new DecodeError(path, `no mapping for Spanner type ${type.code}`);
  }
}

/**
 * One client value → the JSON form a change-stream mod carries for a column of `type` (INT64 and NUMERIC as
 * decimal strings, FLOAT as numbers or `"NaN"`/`"Infinity"`, BYTES as base64, DATE `YYYY-MM-DD`, TIMESTAMP
 * RFC 3339 with nine digits, JSON as text, arrays element by element).
 * @throws DecodeError naming the path when the value does not fit the type.
 */
export function clientValueToModJson(value: unknown, type: SpannerType, path: string): JsonValue {
  if (value === null || value === undefined) return null;
  if (type.code === 'ARRAY') {
    if (!Array.isArray(value) || !type.arrayElementType) return fail(path, type, value);
    const element = type.arrayElementType;
    return value.map((v: unknown, i) => clientValueToModJson(v, element, `${path}[${i}]`));
  }
  return scalarForm(value, type, path);
}

/**
 * A client row (array of `{name, value}` or plain object) → writer values of `columns`, through
 * {@link toWriterValue}, plus the exact companions of the TIMESTAMP columns among `primaryKey` (ADR-1402).
 * Columns missing from the row are an error: the projection must include them.
 */
export function clientRowToWriterRow(
  row: unknown,
  columns: TableColumn[],
  issues: ValueIssue[],
  primaryKey: readonly string[] = [],
): Record<string, WriterValue> {
  const fields = structFields(row, 'row');
  const out: Record<string, WriterValue> = {};
  for (const column of columns) {
    if (!(column.name in fields)) throw new DecodeError(`row.${column.name}`, 'column missing from the row');
    const modJson = clientValueToModJson(fields[column.name], column.type, column.name);
    out[column.name] = toWriterValue(column.name, column.type, modJson, issues);
    if (needsExactKey(column.type) && primaryKey.includes(column.name) && modJson !== null)
      out[exactKeyColumn(column.name)] = exactKeyText(column.name, modJson);
  }
  return out;
}
