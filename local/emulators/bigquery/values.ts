/**
 * Cell values as the emulator stores them, and their conversions. Canonical forms: INT64 and TIMESTAMP
 * (microseconds since the epoch) are `bigint`, FLOAT64 `number`, BOOL `boolean`, BYTES `Buffer`, DATE
 * `YYYY-MM-DD`, NUMERIC/BIGNUMERIC/DATETIME/TIME/GEOGRAPHY/JSON/STRING text, STRUCT a `Row`, REPEATED an array.
 */
import { formatTimestamp, fromNanos, parseTimestamp } from '../../../shared/domain/timestamp';
import type { Field } from './schema';

/** One stored cell. */
export type Value = null | string | number | boolean | bigint | Buffer | Value[] | Row;
/** One stored row, keyed by column name as declared in the table schema. */
export interface Row {
  [column: string]: Value;
}

/** A value that cannot be stored in its column; becomes a row error. */
export class ValueError extends Error {}

const NUMERIC = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const INT = /^[+-]?\d+$/;

/** Converts one decoded proto value (int64 as string, bytes as Buffer) into the column's canonical form. */
export function fromProtoValue(value: unknown, field: Field): Value {
  if (value === null || value === undefined) return null;
  if (field.mode === 'REPEATED') {
    if (!Array.isArray(value)) throw new ValueError(`Field ${field.name} must be repeated`);
    return value.map((v) => scalar(v, field));
  }
  return scalar(value, field);
}

function scalar(value: unknown, field: Field): Value {
  const text = typeof value === 'string' ? value : undefined;
  switch (field.type) {
    case 'INT64':
      if (typeof value === 'number' || (text && INT.test(text))) return BigInt(value as string | number);
      break;
    case 'FLOAT64':
      if (typeof value === 'number') return value;
      if (text !== undefined && !Number.isNaN(Number(text))) return Number(text);
      break;
    case 'BOOL':
      if (typeof value === 'boolean') return value;
      break;
    case 'BYTES':
      if (value instanceof Uint8Array) return Buffer.from(value);
      break;
    case 'TIMESTAMP':
      return field.timestampPrecision === 12
        ? timestampPicos(value, field.name)
        : timestampMicros(value, field.name);
    case 'RANGE':
      if (typeof value === 'object') return rangeValue(value as Record<string, unknown>, field);
      break;
    case 'DATE':
      return dateValue(value, field.name);
    case 'DATETIME':
      if (text !== undefined) return datetimeValue(text, field.name);
      break;
    case 'NUMERIC':
    case 'BIGNUMERIC':
      if (text !== undefined && NUMERIC.test(text)) return text;
      break;
    case 'JSON':
      if (text !== undefined) return validJson(text, field.name);
      break;
    case 'STRUCT':
      if (typeof value === 'object') return structValue(value as Record<string, unknown>, field);
      break;
    default:
      if (text !== undefined) return text;
  }
  throw new ValueError(`Invalid value for field ${field.name} of type ${field.type}: ${String(value)}`);
}

function timestampMicros(value: unknown, name: string): bigint {
  if (typeof value === 'number' || (typeof value === 'string' && INT.test(value))) return BigInt(value);
  if (typeof value === 'string') {
    try {
      return parseTimestamp(value) / 1000n;
    } catch {
      // falls through to the error below
    }
  }
  throw new ValueError(`Invalid TIMESTAMP value for field ${name}: ${String(value)}`);
}

const PICOS = /^(\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2})(?:\.(\d{1,12}))?([Zz]|[+-]\d{2}:\d{2})$/;

/** A picosecond TIMESTAMP: canonical RFC 3339 text in UTC with twelve fractional digits. */
function timestampPicos(value: unknown, name: string): string {
  if (typeof value === 'number' || (typeof value === 'string' && INT.test(value)))
    return `${formatTimestamp(fromNanos(BigInt(value) * 1000n)).slice(0, -1)}000Z`;
  const m = typeof value === 'string' ? PICOS.exec(value) : null;
  if (m) {
    const frac = (m[2] ?? '').padEnd(12, '0');
    try {
      const ns = parseTimestamp(`${m[1]}.${frac.slice(0, 9)}${m[3]}`);
      return `${formatTimestamp(ns).slice(0, -1)}${frac.slice(9)}Z`;
    } catch {
      // falls through to the error below
    }
  }
  throw new ValueError(`Invalid TIMESTAMP value for field ${name}: ${String(value)}`);
}

/** A RANGE value: `{start, end}` of its element type, either bound NULL for UNBOUNDED. */
function rangeValue(value: Record<string, unknown>, field: Field): Row {
  const element: Field = { name: field.name, type: field.rangeElementType ?? 'DATE', mode: 'NULLABLE' };
  return { start: fromProtoValue(value.start, element), end: fromProtoValue(value.end, element) };
}

function dateValue(value: unknown, name: string): string {
  // Days since the epoch, as an int32 or (a proto declaring the column int64) an int64 decoded as text.
  const days = typeof value === 'string' && INT.test(value) ? Number(value) : value;
  if (typeof days === 'number' && Number.isInteger(days) && days >= -719162 && days <= 2932896) {
    return new Date(days * 86_400_000).toISOString().slice(0, 10);
  }
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value)) return value;
  throw new ValueError(`Invalid DATE value for field ${name}: ${String(value)}`);
}

const DATETIME = /^(\d{4}-\d{2}-\d{2})(?:[Tt ](\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?))?$/;

/**
 * A DATETIME in the form the service returns it (`2019-02-17T11:24:00`, the fraction without trailing
 * zeros): the Storage Write API takes a space or a `T` and an optional time; anything else is a row error.
 */
function datetimeValue(text: string, name: string): string {
  const m = DATETIME.exec(text);
  const day = m?.[1];
  if (!m || !day || !validDay(day) || !validClock(m[2]))
    throw new ValueError(`Invalid DATETIME value for field ${name}: ${text}`);
  // The service drops trailing zeros of the fraction (`.000` comes back as none).
  const [hms = '00:00:00', fraction = ''] = (m[2] ?? '00:00:00').split('.');
  const digits = fraction.replace(/0+$/, '');
  return `${day}T${hms}${digits ? `.${digits}` : ''}`;
}

function validDay(day: string): boolean {
  const ms = Date.parse(`${day}T00:00:00Z`);
  return !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 10) === day;
}

function validClock(clock: string | undefined): boolean {
  if (clock === undefined) return true;
  const [h, min, sec] = clock.split(':').map((x) => Number.parseFloat(x));
  return (h ?? 99) < 24 && (min ?? 99) < 60 && (sec ?? 99) < 60;
}

function validJson(text: string, name: string): string {
  try {
    JSON.parse(text);
    return text;
  } catch {
    throw new ValueError(`Invalid JSON value for field ${name}`);
  }
}

function structValue(value: Record<string, unknown>, field: Field): Row {
  const out: Row = {};
  for (const sub of field.fields ?? []) {
    const v = value[sub.name];
    out[sub.name] = fromProtoValue(v, sub);
  }
  return out;
}

/** How tabledata.list / jobs.query render TIMESTAMP cells. */
export type TimestampFormat = 'ISO8601' | 'INT64' | 'FLOAT_SECONDS';

/** REST JSON cell (`{v: …}` content) for a stored value: scalars as strings, the way BigQuery encodes them. */
export function toRestValue(value: Value, field: Field, ts: TimestampFormat): unknown {
  if (value === null) return field.mode === 'REPEATED' ? [] : null;
  if (field.mode === 'REPEATED' && Array.isArray(value)) {
    return value.map((v) => ({ v: restScalar(v, field, ts) }));
  }
  return restScalar(value, field, ts);
}

function restScalar(value: Value, field: Field, ts: TimestampFormat): unknown {
  if (value === null) return null;
  if (Buffer.isBuffer(value)) return value.toString('base64');
  if (field.type === 'TIMESTAMP' && typeof value === 'bigint') return formatMicros(value, ts);
  if (field.type === 'TIMESTAMP' && typeof value === 'string') return formatPicos(value, ts);
  if (field.type === 'RANGE' && typeof value === 'object' && !Array.isArray(value)) {
    const r = value as Row;
    const el: Field = { name: field.name, type: field.rangeElementType ?? 'DATE', mode: 'NULLABLE' };
    const bound = (v: Value) => (v === null ? 'UNBOUNDED' : String(restScalar(v, el, ts)));
    return `[${bound(r.start ?? null)}, ${bound(r.end ?? null)})`;
  }
  if (field.type === 'STRUCT' && typeof value === 'object' && !Array.isArray(value)) {
    const row = value as Row;
    return { f: (field.fields ?? []).map((sub) => ({ v: toRestValue(row[sub.name] ?? null, sub, ts) })) };
  }
  if (typeof value === 'number') return floatText(value);
  return String(value);
}

function floatText(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? 'Infinity' : '-Infinity';
  return String(n);
}

/** A picosecond TIMESTAMP cell: the stored text for ISO 8601, otherwise its microseconds. */
function formatPicos(text: string, ts: TimestampFormat): string {
  if (ts === 'ISO8601') return text;
  return formatMicros(parseTimestamp(`${text.slice(0, -4)}Z`) / 1000n, ts);
}

function formatMicros(micros: bigint, ts: TimestampFormat): string {
  if (ts === 'INT64') return micros.toString();
  // Microsecond precision, always six digits (the stored precision of a BigQuery TIMESTAMP).
  if (ts === 'ISO8601')
    return formatTimestamp(fromNanos(micros * 1000n)).replace(
      /(\.\d{6})\d*Z$|Z$/,
      (_m, f: string | undefined) => `${f ?? '.000000'}Z`,
    );
  const sign = micros < 0n ? '-' : '';
  const abs = micros < 0n ? -micros : micros;
  const frac = (abs % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
  return `${sign}${abs / 1_000_000n}${frac ? `.${frac}` : ''}`;
}

/** Stable text key of a row's primary-key columns (bigint-safe). */
export function keyOf(row: Row, columns: string[]): string {
  return JSON.stringify(columns.map((c) => stableText(row[c] ?? null)));
}

function stableText(v: Value): string {
  if (v === null) return 'null';
  if (Buffer.isBuffer(v)) return `b:${v.toString('base64')}`;
  if (typeof v === 'object') return JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x));
  return `${typeof v}:${String(v)}`;
}
