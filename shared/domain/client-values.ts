/**
 * Structural readers for the values the Spanner Node client hands back, without importing it: STRUCTs as
 * arrays of `{name, value}` (default) or plain objects (`json: true`), INT64 as an `Int` wrapper, a number or
 * a digit string, TIMESTAMP as a `PreciseDate`, JSON already parsed (GoogleSQL) or as text.
 */
import type { JsonValue } from './change-record';
import { SluiceError } from './errors';
import { rowValue } from './log-values';
import { fromSpannerValue, type Timestamp } from './timestamp';

/**
 * A value of a change-stream row did not have the expected shape, or cannot be mapped to its destination;
 * names where (`Table.Column` or the record field) and what was seen. Permanent: the same value decodes the
 * same way on every attempt (ADR-1501).
 */
export class DecodeError extends SluiceError {
  override readonly name = 'DecodeError';
  constructor(
    readonly path: string,
    message: string,
  ) {
    super('permanent', `${path}: ${message}`);
  }
}

/**
 * A short, safe rendering of an unexpected value for error messages; the value itself is marked as a row's
 * (log-values.ts), so the logs quote it only under `SLUICE_LOG_VALUES=all`.
 */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (value === null) return 'null';
  if (typeof value === 'bigint') return `bigint ${rowValue(String(value))}`;
  if (typeof value !== 'object') return `${typeof value} ${rowValue(String(JSON.stringify(value)))}`;
  const kind = Array.isArray(value) ? 'array' : `object ${value.constructor?.name ?? 'Object'}`;
  let text: string;
  try {
    text = JSON.stringify(value) ?? '';
  } catch {
    text = '(not serialisable)';
  }
  return `${kind} ${rowValue(text.length > 120 ? `${text.slice(0, 117)}...` : text)}`;
}

function isNamedField(item: unknown): item is { name: string; value: unknown } {
  return typeof item === 'object' && item !== null && 'name' in item && 'value' in item;
}

/** The fields of a STRUCT (or row) in either of the client's shapes, keyed by name. */
export function structFields(value: unknown, path: string): Record<string, unknown> {
  if (Array.isArray(value)) {
    if (!value.every(isNamedField))
      throw new DecodeError(path, `expected a struct, saw ${describeValue(value)}`);
    return Object.fromEntries(value.map((f) => [f.name, f.value]));
  }
  if (typeof value === 'object' && value !== null) return value as Record<string, unknown>;
  throw new DecodeError(path, `expected a struct, saw ${describeValue(value)}`);
}

/** An ARRAY value; NULL reads as empty (the emulator sends empty arrays, production may send NULL). */
export function readArray(value: unknown, path: string): unknown[] {
  if (value === null || value === undefined) return [];
  if (!Array.isArray(value)) throw new DecodeError(path, `expected an array, saw ${describeValue(value)}`);
  return value;
}

/** A STRING value. */
export function readString(value: unknown, path: string): string {
  if (typeof value !== 'string')
    throw new DecodeError(path, `expected a string, saw ${describeValue(value)}`);
  return value;
}

/** A STRING that may be NULL (read as empty). */
export function readOptionalString(value: unknown, path: string): string {
  return value === null || value === undefined ? '' : readString(value, path);
}

/** A BOOL value; NULL reads as false. */
export function readBool(value: unknown, path: string): boolean {
  if (value === null || value === undefined) return false;
  if (typeof value !== 'boolean')
    throw new DecodeError(path, `expected a boolean, saw ${describeValue(value)}`);
  return value;
}

/** An INT64 as a bigint: a number, a digit string, a bigint, or the client's `Int` wrapper (`.value`). */
export function readInt(value: unknown, path: string): bigint {
  let v = value;
  if (typeof v === 'object' && v !== null && 'value' in v) v = (v as { value: unknown }).value;
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  if (typeof v === 'string' && /^-?\d+$/.test(v)) return BigInt(v);
  throw new DecodeError(path, `expected an INT64, saw ${describeValue(value)}`);
}

/** An INT64 that must fit a JavaScript number (counts). */
export function readCount(value: unknown, path: string): number {
  const n = readInt(value, path);
  if (n < 0n || n > BigInt(Number.MAX_SAFE_INTEGER)) throw new DecodeError(path, `count ${n} out of range`);
  return Number(n);
}

/** A TIMESTAMP: the client's `PreciseDate` or an RFC 3339 string with any fractional width or offset. */
export function readTimestamp(value: unknown, path: string): Timestamp {
  try {
    if (typeof value === 'string') return fromSpannerValue(value);
    if (typeof value === 'object' && value !== null && 'getFullTimeString' in value) {
      const full = (value as { getFullTimeString: unknown }).getFullTimeString;
      if (typeof full === 'function') return fromSpannerValue({ getFullTimeString: () => full.call(value) });
    }
  } catch (e) {
    throw new DecodeError(path, (e as Error).message);
  }
  throw new DecodeError(path, `expected a timestamp, saw ${describeValue(value)}`);
}

function isJsonValue(value: unknown): value is JsonValue {
  // Every mod's keys and values pass here: plain loops, no array or closure per value.
  const type = typeof value;
  if (value === null || type === 'string' || type === 'boolean') return true;
  if (type === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) {
    for (const e of value) if (!isJsonValue(e)) return false;
    return true;
  }
  if (type === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    for (const k in value as object) if (!isJsonValue((value as Record<string, unknown>)[k])) return false;
    return true;
  }
  return false;
}

/**
 * A JSON column holding an object (`keys`, `new_values`, `old_values`, `type`): already parsed by the
 * client, or JSON text. NULL reads as `{}` (the emulator sends `{}` for empty values).
 */
export function readJsonObject(value: unknown, path: string): Record<string, JsonValue> {
  let v = value;
  if (v === null || v === undefined) return {};
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v);
    } catch {
      throw new DecodeError(path, `expected JSON text, saw ${describeValue(value)}`);
    }
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v) || !isJsonValue(v)) {
    throw new DecodeError(path, `expected a JSON object, saw ${describeValue(value)}`);
  }
  return v as Record<string, JsonValue>;
}
