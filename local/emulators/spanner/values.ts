/**
 * Value codec. Three forms: the proto form of `google.protobuf.Value` (as proto-loader gives and takes it),
 * the wire form (`WireValue`, see hooks.ts) and the stored form kept in SQLite. Stored forms are chosen so
 * SQLite's own ordering matches Spanner's: INT64 as 64-bit integers, TIMESTAMP as fixed-width RFC 3339
 * text with nine fractional digits, DATE as `YYYY-MM-DD`, BYTES as blobs, BOOL as 0/1, ARRAY as JSON text.
 */
import { formatTimestamp, fromNanos, parseTimestamp } from '../../../shared/domain/timestamp';
import { Code, SpannerError, type SpannerTypeJson, type WireValue } from './hooks';
import { canonicalJsonText } from './json-text';

/** A value as SQLite stores it. */
export type StoredValue = null | bigint | number | string | Buffer;

/** `google.protobuf.Value` in proto-loader's plain-object form. */
export interface ProtoValue {
  nullValue?: string | number;
  numberValue?: number;
  stringValue?: string;
  boolValue?: boolean;
  listValue?: { values?: ProtoValue[] };
  structValue?: unknown;
  kind?: string;
}

/** The placeholder a client writes to ask for the commit timestamp. */
export const COMMIT_TIMESTAMP_SENTINEL = 'spanner.commit_timestamp()';

function bad(message: string): never {
  throw new SpannerError(Code.INVALID_ARGUMENT, message);
}

/** Proto form → wire form. */
export function protoToWire(v: ProtoValue | undefined): WireValue {
  if (!v) return null;
  const kind =
    v.kind ?? Object.keys(v).find((k) => k !== 'kind' && (v as Record<string, unknown>)[k] !== undefined);
  switch (kind) {
    case 'stringValue':
      return v.stringValue ?? '';
    case 'numberValue':
      return v.numberValue ?? 0;
    case 'boolValue':
      return v.boolValue ?? false;
    case 'listValue':
      return (v.listValue?.values ?? []).map(protoToWire);
    case 'structValue':
      return bad('STRUCT values are not supported by the emulator');
    default:
      return null;
  }
}

/** Wire form → proto form. Non-finite floats travel as strings, as Spanner sends them. */
export function wireToProto(w: WireValue): ProtoValue {
  if (w === null) return { nullValue: 'NULL_VALUE' };
  if (typeof w === 'boolean') return { boolValue: w };
  if (typeof w === 'number') {
    if (Number.isFinite(w)) return { numberValue: w };
    return { stringValue: Number.isNaN(w) ? 'NaN' : w > 0 ? 'Infinity' : '-Infinity' };
  }
  if (typeof w === 'string') return { stringValue: w };
  return { listValue: { values: w.map(wireToProto) } };
}

/** Normalizes a TIMESTAMP text to the stored fixed-width form. */
export function normalizeTimestamp(text: string): string {
  if (text === COMMIT_TIMESTAMP_SENTINEL) return text;
  try {
    return formatTimestamp(parseTimestamp(text));
  } catch {
    return bad(`Invalid TIMESTAMP value: ${text}`);
  }
}

/** Formats nanoseconds since the epoch in the stored TIMESTAMP form. */
export function nanosToText(ns: bigint): string {
  return formatTimestamp(fromNanos(ns));
}

function toFloat(w: WireValue): number {
  if (typeof w === 'number') return w;
  if (w === 'NaN') return Number.NaN;
  if (w === 'Infinity') return Number.POSITIVE_INFINITY;
  if (w === '-Infinity') return Number.NEGATIVE_INFINITY;
  if (typeof w === 'string' && w.trim() !== '' && !Number.isNaN(Number(w))) return Number(w);
  return bad(`Invalid FLOAT value: ${JSON.stringify(w)}`);
}

function toInt(w: WireValue): bigint {
  const text = typeof w === 'number' && Number.isInteger(w) ? String(w) : w;
  if (typeof text !== 'string' || !/^-?\d+$/.test(text))
    return bad(`Invalid INT64 value: ${JSON.stringify(w)}`);
  const v = BigInt(text);
  if (v > 9223372036854775807n || v < -9223372036854775808n) return bad(`INT64 value out of range: ${text}`);
  return v;
}

function toNumeric(w: WireValue, pg: boolean): string {
  const text = typeof w === 'number' ? String(w) : w;
  if (pg && text === 'NaN') return text;
  const m = typeof text === 'string' ? /^([+-]?)0*(\d*)(?:\.(\d*?)0*)?$/.exec(text) : null;
  // At least one digit: "0", "0.0" and "-0" are zero, "." and "" are not numbers.
  if (!m || !/\d/.test(text as string)) return bad(`Invalid NUMERIC value: ${JSON.stringify(w)}`);
  const [int, frac] = [m[2] || '0', m[3] ?? ''];
  if (!pg && (int.length > 29 || frac.length > 9))
    return bad(`Invalid NUMERIC value: ${text} is out of range`);
  const sign = m[1] === '-' && (int !== '0' || frac !== '') ? '-' : '';
  return `${sign}${int}${frac ? `.${frac}` : ''}`;
}

function toJsonText(w: WireValue, pg: boolean): string {
  if (typeof w !== 'string') return bad('JSON values must be sent as strings');
  return canonicalJsonText(w, pg);
}

const UUID_TEXT = /^[0-9a-f](?:-?[0-9a-f]){31}$/i;

/**
 * A UUID in its canonical form (lower case, 8-4-4-4-12). Accepted as the service's parser accepts it: 32 hex
 * digits in either case, single hyphens anywhere between digits, optionally in one pair of braces.
 */
export function canonicalUuid(w: WireValue): string {
  const text = typeof w === 'string' ? w : JSON.stringify(w);
  const inner = /^\{(.*)\}$/.exec(text)?.[1] ?? text;
  if (typeof w !== 'string' || !UUID_TEXT.test(inner))
    throw new SpannerError(
      Code.FAILED_PRECONDITION,
      `Could not parse ${text} as a UUID: Invalid input. For details on the UUID type, see https://cloud.google.com/spanner/docs/data-types#uuid_type`,
    );
  const hex = inner.replace(/-/g, '').toLowerCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function toEnumNumber(w: WireValue, type: SpannerTypeJson): string {
  const text = typeof w === 'number' && Number.isInteger(w) ? String(w) : w;
  const n = typeof text === 'string' && /^-?\d+$/.test(text) ? BigInt(text) : undefined;
  // The official emulator's message and code (the number is parsed as an int32).
  if (n === undefined || n < -2147483648n || n > 2147483647n)
    throw new SpannerError(
      Code.FAILED_PRECONDITION,
      `Could not parse ${typeof w === 'string' ? w : JSON.stringify(w)} as an integer (an ENUM ${type.protoTypeFqn ?? ''} number)`,
    );
  return n.toString();
}

/** Wire value → the scalar's canonical wire form (used for arrays and for stored scalars). */
function canonical(w: WireValue, type: SpannerTypeJson): WireValue {
  if (w === null) return null;
  switch (type.code) {
    case 'INT64':
      return toInt(w).toString();
    case 'ENUM':
      // The enum's number, as INT64 travels (a decimal string); enum numbers are int32.
      return toEnumNumber(w, type);
    case 'PROTO':
      // The serialized message, base64 as BYTES travel; never decoded.
      return typeof w === 'string' ? w : bad(`Invalid PROTO value: ${JSON.stringify(w)}`);
    case 'FLOAT64':
    case 'FLOAT32':
      return toFloat(w);
    case 'BOOL':
      return typeof w === 'boolean' ? w : bad(`Invalid BOOL value: ${JSON.stringify(w)}`);
    case 'NUMERIC':
      return toNumeric(w, type.typeAnnotation === 'PG_NUMERIC');
    case 'JSON':
      return toJsonText(w, type.typeAnnotation === 'PG_JSONB');
    case 'TIMESTAMP':
      return typeof w === 'string' ? normalizeTimestamp(w) : bad('TIMESTAMP values must be strings');
    case 'DATE':
      return typeof w === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(w)
        ? w
        : bad(`Invalid DATE value: ${String(w)}`);
    case 'STRING':
    case 'BYTES':
      return typeof w === 'string' ? w : bad(`Invalid ${type.code} value: ${JSON.stringify(w)}`);
    case 'UUID':
      return canonicalUuid(w);
    case 'ARRAY':
      if (!Array.isArray(w)) return bad('ARRAY values must be lists');
      return w.map((e) => canonical(e, type.arrayElementType as SpannerTypeJson));
    case 'STRUCT': {
      const fields = type.structType?.fields ?? [];
      if (!Array.isArray(w) || w.length !== fields.length)
        return bad(`STRUCT values must be lists of ${fields.length} field values`);
      return w.map((e, i) => canonical(e, (fields[i] as { type: SpannerTypeJson }).type));
    }
    default:
      throw new SpannerError(Code.UNIMPLEMENTED, `Type ${type.code} is not supported by the emulator`);
  }
}

/** Wire value of a column of `type` → stored form (validating it). */
export function wireToStored(w: WireValue, type: SpannerTypeJson): StoredValue {
  const c = canonical(w, type);
  if (c === null) return null;
  switch (type.code) {
    case 'INT64':
    case 'ENUM':
      return BigInt(c as string);
    case 'BOOL':
      return c ? 1n : 0n;
    case 'FLOAT64':
    case 'FLOAT32':
      return Number.isNaN(c) ? 'NaN' : (c as number);
    case 'BYTES':
    case 'PROTO':
      return Buffer.from(c as string, 'base64');
    case 'ARRAY':
    case 'STRUCT':
      return JSON.stringify(c, (_k, v: unknown) =>
        typeof v === 'number' && !Number.isFinite(v) ? String(v) : v,
      );
    default:
      return c as string;
  }
}

function floatWire(v: StoredValue): WireValue {
  if (typeof v === 'string') return Number(v);
  return typeof v === 'bigint' ? Number(v) : (v as number);
}

/** Stored value → wire form for a column of `type`. */
export function storedToWire(v: StoredValue, type: SpannerTypeJson): WireValue {
  if (v === null) return null;
  switch (type.code) {
    case 'INT64':
    case 'ENUM':
      return typeof v === 'number' ? String(Math.trunc(v)) : String(v);
    case 'BOOL':
      return v === 1n || v === 1 || v === '1';
    case 'FLOAT64':
    case 'FLOAT32':
      return floatWire(v);
    case 'BYTES':
    case 'PROTO':
      return Buffer.isBuffer(v) ? v.toString('base64') : Buffer.from(String(v)).toString('base64');
    case 'ARRAY':
    case 'STRUCT':
      return jsonToWire(JSON.parse(String(v)) as WireValue, type);
    default:
      return Buffer.isBuffer(v) ? v.toString('base64') : String(v);
  }
}

/** A stored ARRAY / STRUCT (parsed JSON of canonical wire values) → wire form: floats become numbers. */
export function jsonToWire(w: WireValue, type: SpannerTypeJson): WireValue {
  if (w === null) return null;
  switch (type.code) {
    case 'FLOAT64':
    case 'FLOAT32':
      return toFloat(w);
    case 'ARRAY':
      return (w as WireValue[]).map((e) => jsonToWire(e, type.arrayElementType as SpannerTypeJson));
    case 'STRUCT': {
      const fields = type.structType?.fields ?? [];
      return (w as WireValue[]).map((e, i) => jsonToWire(e, (fields[i] as { type: SpannerTypeJson }).type));
    }
    default:
      return w;
  }
}

/** Type of a computed result column, from the values it holds (STRING when nothing tells). */
export function inferType(values: StoredValue[]): SpannerTypeJson {
  const v = values.find((x) => x !== null);
  if (typeof v === 'bigint') return { code: 'INT64' };
  if (typeof v === 'number') return { code: 'FLOAT64' };
  if (Buffer.isBuffer(v)) return { code: 'BYTES' };
  return { code: 'STRING' };
}

/** Stored value of a query parameter: typed by `paramTypes`, or by its wire form when untyped. */
export function paramToStored(w: WireValue, type: SpannerTypeJson | undefined): StoredValue {
  if (type && type.code !== 'TYPE_CODE_UNSPECIFIED') return wireToStored(w, type);
  if (w === null) return null;
  if (typeof w === 'boolean') return w ? 1n : 0n;
  if (Array.isArray(w)) return JSON.stringify(w);
  return w;
}

/** A value computed by SQLite (DML expressions) → stored form of a column of `type`, checking the type. */
export function rawToColumn(raw: StoredValue, type: SpannerTypeJson): StoredValue {
  if (raw === null) return null;
  const mismatch = () =>
    bad(`Value of type ${typeof raw} cannot be assigned to a column of type ${type.code}`);
  switch (type.code) {
    case 'BOOL':
      return raw === 0n || raw === 1n || raw === 0 || raw === 1 ? BigInt(raw) : mismatch();
    case 'INT64':
    case 'ENUM':
      return typeof raw === 'bigint'
        ? raw
        : typeof raw === 'number' && Number.isInteger(raw)
          ? BigInt(raw)
          : mismatch();
    case 'FLOAT64':
    case 'FLOAT32':
      return typeof raw === 'bigint'
        ? Number(raw)
        : typeof raw === 'number' || raw === 'NaN'
          ? raw
          : mismatch();
    case 'BYTES':
    case 'PROTO':
      return Buffer.isBuffer(raw) ? raw : mismatch();
    case 'ARRAY':
      return typeof raw === 'string' ? wireToStored(JSON.parse(raw) as WireValue, type) : mismatch();
    case 'NUMERIC':
      return wireToStored(
        typeof raw === 'bigint' || typeof raw === 'number' ? String(raw) : String(raw),
        type,
      );
    default:
      return typeof raw === 'string' ? wireToStored(raw, type) : mismatch();
  }
}
