/**
 * One comparable text per cell, from either side of the comparison: the Spanner Node client's values
 * (`Int`/`Numeric` wrappers, `PreciseDate`, `SpannerDate`, parsed JSON, Buffers) and the BigQuery
 * emulator's stored cells (INT64 and TIMESTAMP as bigint microseconds, NUMERIC / JSON as text, Buffers).
 * Timestamps compare at microseconds because BigQuery keeps no more.
 */
import { readInt, readTimestamp } from '../shared/domain/client-values';
import { formatTimestamp, fromNanos, toBigQueryMicros } from '../shared/domain/timestamp';
import { type ColumnKind, elementKind, type ScalarKind } from './demo-schema';
import { canonicalJsonText } from './emulators/spanner/json-text';

/** Normalises a decimal text: no sign on zero, no trailing fractional zeros, no leading zeros. */
export function canonicalDecimal(text: string): string {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(text.trim());
  if (!m) return text;
  const int = (m[2] ?? '').replace(/^0+(?=\d)/, '') || '0';
  const frac = (m[3] ?? '').replace(/0+$/, '');
  const body = frac ? `${int}.${frac}` : int;
  return body === '0' ? '0' : `${m[1] === '-' ? '-' : ''}${body}`;
}

/** JSON with object keys sorted, so equal documents compare equal whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function wrapped(value: unknown): unknown {
  if (value !== null && typeof value === 'object' && 'value' in value) return value.value;
  return value;
}

function micros(value: unknown): string {
  if (typeof value === 'bigint') return value.toString();
  return toBigQueryMicros(readTimestamp(value, 'timestamp')).toString();
}

function dateText(value: unknown): string {
  if (typeof value === 'string') return value.slice(0, 10);
  if (value instanceof Date) {
    // SpannerDate renders its calendar date in toJSON; a plain Date is UTC.
    const json = value.toJSON();
    return /^\d{4}-\d{2}-\d{2}$/.test(json) ? json : value.toISOString().slice(0, 10);
  }
  return String(value);
}

/** JSON compared as text, numbers kept exactly (both sides are the text Spanner holds and BigQuery got). */
function jsonText(value: unknown): string {
  const v = wrapped(value);
  return typeof v === 'string' ? canonicalJsonText(v, true) : canonicalJson(v);
}

function scalarText(kind: ScalarKind, value: unknown): string {
  switch (kind) {
    case 'int':
    case 'enum':
      // An ENUM is its number: Spanner sends it as INT64 text, the replica holds INT64.
      return readInt(wrapped(value), 'int').toString();
    case 'numeric':
      return canonicalDecimal(String(wrapped(value)));
    case 'float':
    case 'float32':
      return String(Number(wrapped(value)));
    case 'bool':
      return String(Boolean(value));
    case 'date':
      return dateText(value);
    case 'timestamp':
      return micros(value);
    case 'bytes':
    case 'proto':
      // A PROTO is its serialized bytes: base64 from Spanner, BYTES in the replica.
      return Buffer.isBuffer(value) ? value.toString('base64') : String(value);
    case 'json':
      return jsonText(value);
    default:
      return String(value);
  }
}

/**
 * The comparable text of one cell of the given kind; `null` for NULL. Arrays compare as BigQuery keeps them
 * (the documented choice): NULL elements left out, and a NULL array read as empty.
 */
export function canonicalValue(kind: ColumnKind, value: unknown): string | null {
  const element = elementKind(kind);
  if (element !== undefined) {
    const items = Array.isArray(value) ? value : [];
    return JSON.stringify(
      items.filter((x) => x !== null && x !== undefined).map((x) => scalarText(element, x)),
    );
  }
  if (value === null || value === undefined) return null;
  return scalarText(kind as ScalarKind, value);
}

/** The exact text (nine fractional digits) of a TIMESTAMP read from Spanner, for keys. */
export function exactTimestamp(value: unknown): string {
  return formatTimestamp(readTimestamp(value, 'timestamp'));
}

/** A timestamp as BigQuery microseconds text, from nanoseconds. */
export function microsOfNanos(ns: bigint): string {
  return toBigQueryMicros(fromNanos(ns)).toString();
}
