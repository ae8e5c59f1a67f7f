/**
 * Mod JSON value → the value the Storage Write API JSON writer expects for the mapped BigQuery field:
 * TIMESTAMP as microseconds (decimal string), DATE as days since the epoch, INT64 / NUMERIC / BIGNUMERIC as
 * decimal strings, JSON as text, BYTES as base64, FLOAT64 as a number (NaN and infinities included).
 * Values BigQuery cannot hold are a permanent {@link UnrepresentableError}, never guessed or nulled (ADR-1403).
 */
import type { JsonValue, SpannerType } from './change-record';
import { DecodeError, describeValue } from './client-values';
import { rowValue } from './log-values';
import { UnrepresentableError } from './record-errors';
import { bigQueryMicrosText, parseDate } from './timestamp';

/** A value for a JSON writer row. */
export type WriterValue = string | number | boolean | null | WriterValue[];

/** A value that could not be written as it was, and what was written instead (a documented choice). */
export interface ValueIssue {
  column: string;
  kind: 'null-array-element';
  detail: string;
}

const INTEGER = /^-?\d+$/;
/** Integer text in canonical form (no leading zeros, no `-0`) that is inside the INT64 range by its length. */
const CANONICAL_INT64 = /^(?:0|-?[1-9]\d{0,17})$/;
/** GoogleSQL NUMERIC text already in the form {@link numericValue} gives it (29 integer, 9 fractional digits). */
const CANONICAL_NUMERIC = /^-?(?:0|[1-9]\d{0,28})(?:\.\d{1,9})?$/;
const DECIMAL = /^([+-]?)(\d+)(?:\.(\d+))?$/;
/** Base64 text, checked without backtracking (a 14 MB value overflowed a grouped pattern's stack). */
const BASE64_CHARS = /^[A-Za-z0-9+/]*={0,2}$/;

function isBase64(value: string): boolean {
  return value.length % 4 === 0 && BASE64_CHARS.test(value);
}
const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

function fail(column: string, type: SpannerType, value: unknown): never {
  throw new DecodeError(column, `expected a ${type.code} value, saw ${describeValue(value)}`);
}

/** A JSON number the client has already rounded: its exact digits cannot be recovered. */
function roundedNumber(column: string, type: SpannerType, value: number): never {
  throw new DecodeError(
    column,
    `a ${type.code} value arrived as the JSON number ${value}, beyond 2^53: its exact digits were lost before ` +
      'the pipeline saw it, so it is refused rather than written rounded',
  );
}

function integerText(column: string, type: SpannerType, value: JsonValue): string {
  if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value))
    roundedNumber(column, type, value);
  const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value;
  if (typeof text === 'string' && CANONICAL_INT64.test(text)) return text;
  if (typeof text !== 'string' || !INTEGER.test(text)) fail(column, type, value);
  const n = BigInt(text);
  if (n < INT64_MIN || n > INT64_MAX) fail(column, type, value);
  return n.toString();
}

function floatValue(column: string, type: SpannerType, value: JsonValue): number {
  if (typeof value === 'number') return value;
  if (value === 'NaN') return Number.NaN;
  if (value === 'Infinity') return Number.POSITIVE_INFINITY;
  if (value === '-Infinity') return Number.NEGATIVE_INFINITY;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)))
    return Number(value);
  fail(column, type, value);
}

/**
 * Decimal text of a NUMERIC. GoogleSQL NUMERIC (29 integer digits, scale 9) always fits BigQuery NUMERIC; PG
 * NUMERIC goes to BIGNUMERIC (38 integer digits, scale 38), and what exceeds it — NaN included — cannot be held.
 * Trailing fractional zeros do not count against the scale (`1.50…0` is 1.5).
 * @throws UnrepresentableError naming the column and the value.
 */
function numericValue(column: string, type: SpannerType, value: JsonValue): string {
  const big = type.typeAnnotation === 'PG_NUMERIC';
  if (!big && typeof value === 'string' && CANONICAL_NUMERIC.test(value)) return value;
  if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value))
    roundedNumber(column, type, value);
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  if (text === 'NaN' && big)
    throw new UnrepresentableError(
      'value',
      column,
      'PostgreSQL NUMERIC NaN has no BigQuery BIGNUMERIC value',
    );
  const m = typeof text === 'string' ? DECIMAL.exec(text) : null;
  if (!m) fail(column, type, value);
  const [, sign, whole, rawFraction = ''] = m;
  const fraction = rawFraction.replace(/0+$/, '');
  const maxScale = big ? 38 : 9;
  const maxWhole = big ? 38 : 29;
  const digits = whole!.replace(/^0+(?=\d)/, '');
  if (fraction.length > maxScale || digits.length > maxWhole) {
    const target = big ? 'BIGNUMERIC' : 'NUMERIC';
    const t = m.input;
    const shown = rowValue(t.length > 60 ? `${t.slice(0, 30)}…${t.slice(-20)} (${t.length} characters)` : t);
    throw new UnrepresentableError(
      'value',
      column,
      `${shown} exceeds BigQuery ${target} (${maxWhole} integer digits, ${maxScale} fractional digits)`,
    );
  }
  // Trailing zeros are kept unless the scale needs them gone (the same value either way).
  const kept = rawFraction.length > maxScale ? fraction : rawFraction;
  return `${sign === '-' ? '-' : ''}${digits}${kept ? `.${kept}` : ''}`;
}

function stringValue(column: string, type: SpannerType, value: JsonValue): string {
  if (typeof value !== 'string') fail(column, type, value);
  return value;
}

function scalarValue(column: string, type: SpannerType, value: JsonValue): WriterValue {
  switch (type.code) {
    case 'BOOL':
      if (typeof value !== 'boolean') fail(column, type, value);
      return value;
    case 'INT64':
    case 'ENUM':
      return integerText(column, type, value);
    case 'FLOAT32':
    case 'FLOAT64':
      return floatValue(column, type, value);
    case 'NUMERIC':
      return numericValue(column, type, value);
    case 'STRING':
    case 'UUID':
    case 'INTERVAL':
      return stringValue(column, type, value);
    case 'BYTES':
    case 'PROTO':
      if (typeof value !== 'string' || !isBase64(value)) fail(column, type, value);
      return value;
    case 'DATE':
      try {
        return parseDate(stringValue(column, type, value));
      } catch (e) {
        throw e instanceof DecodeError ? e : new DecodeError(column, (e as Error).message);
      }
    case 'TIMESTAMP':
      try {
        // Truncated toward the past to microseconds; the history table keeps the exact text.
        return bigQueryMicrosText(stringValue(column, type, value));
      } catch (e) {
        throw e instanceof DecodeError ? e : new DecodeError(column, (e as Error).message);
      }
    case 'JSON':
      // Spanner sends JSON column values as JSON text; anything else is serialised.
      return typeof value === 'string' ? value : JSON.stringify(value);
    default:
      throw new DecodeError(column, `no BigQuery mapping for Spanner type ${type.code}`);
  }
}

/**
 * Maps one mod value of a column to its JSON-writer form. NULL stays NULL; a NULL array becomes an empty
 * array and NULL elements are dropped, each drop reported in `issues` (BigQuery arrays cannot hold NULL).
 * @throws DecodeError naming the column when the value does not match the column's type.
 */
export function toWriterValue(
  column: string,
  type: SpannerType,
  value: JsonValue,
  issues: ValueIssue[],
): WriterValue {
  if (type.code === 'ARRAY') {
    if (value === null) return [];
    if (!Array.isArray(value) || !type.arrayElementType) fail(column, type, value);
    const element = type.arrayElementType;
    const out: WriterValue[] = [];
    for (let i = 0; i < value.length; i++) {
      const v = value[i] as JsonValue;
      if (v === null) {
        issues.push({ column, kind: 'null-array-element', detail: `dropped NULL element at index ${i}` });
        continue;
      }
      const mapped = scalarValue(column, element, v);
      if (mapped !== null) out.push(mapped);
    }
    return out;
  }
  return value === null ? null : scalarValue(column, type, value);
}
