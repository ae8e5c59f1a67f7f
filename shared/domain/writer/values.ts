/**
 * Typing a producer's JSON value by its column's Spanner type (both dialects), into the value Spanner takes
 * on the wire: INT64, NUMERIC, DATE, TIMESTAMP, BYTES (base64), JSON (text), UUID, INTERVAL, ENUM as strings;
 * FLOAT64 / FLOAT32 as numbers, or `"NaN"` / `"Infinity"` / `"-Infinity"`; BOOL as booleans; arrays of those;
 * NULL as null. Anything that does not fit is a problem naming what was expected and what came — never a
 * silent conversion that could change a value.
 */
import type { SpannerType } from '../change-record';
import { rowValue } from '../log-values';
import { formatSpannerType } from '../spanner-types';
import { formatTimestamp, parseDate, parseTimestamp } from '../timestamp';

/** A value in Spanner's wire form (see the module comment). */
export type WireValue = null | boolean | number | string | WireValue[];

/** A typed value, or the problem with it. */
export type Typed = { ok: true; value: WireValue } | { ok: false; problem: string };

/** The placeholder asking Spanner to store the commit timestamp (columns with allow_commit_timestamp). */
export const COMMIT_TIMESTAMP = 'spanner.commit_timestamp()';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const FLOAT32_MAX = 3.4028234663852886e38;
const NON_FINITE = new Set(['NaN', 'Infinity', '-Infinity']);
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DECIMAL = /^[+-]?(\d+)(?:\.(\d*))?$|^[+-]?\.(\d+)$/;

const ok = (value: WireValue): Typed => ({ ok: true, value });

/** A short rendering of what came, for problems; the value itself marked as a row's (log-values.ts). */
export function shown(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value) ?? String(value);
  const type = typeof value;
  const kind = Array.isArray(value)
    ? 'an array'
    : value === null
      ? 'null'
      : type === 'object'
        ? 'an object'
        : `a ${type}`;
  return `${kind} ${rowValue(text.length > 60 ? `${text.slice(0, 57)}...` : text)}`;
}

function expected(type: SpannerType, what: string, value: unknown): Typed {
  return { ok: false, problem: `expected ${formatSpannerType(type)} (${what}), got ${shown(value)}` };
}

function int64(value: unknown, type: SpannerType): Typed {
  const what = 'a decimal string, or a number within ±2^53';
  if (typeof value === 'number')
    return Number.isSafeInteger(value) ? ok(String(value)) : expected(type, what, value);
  if (typeof value !== 'string' || !/^-?\d{1,19}$/.test(value)) return expected(type, what, value);
  const n = BigInt(value);
  return n < INT64_MIN || n > INT64_MAX
    ? expected(type, `${what}; out of the INT64 range`, value)
    : ok(n.toString());
}

function float(value: unknown, type: SpannerType, max?: number): Typed {
  const what = 'a number, or "NaN", "Infinity", "-Infinity"';
  if (typeof value === 'string' && NON_FINITE.has(value)) return ok(value);
  const n =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && DECIMAL.test(value)
        ? Number(value)
        : NaN;
  if (!Number.isFinite(n)) return expected(type, what, value);
  if (max !== undefined && Math.abs(n) > max)
    return expected(type, `${what}; out of the FLOAT32 range`, value);
  return ok(n);
}

function numeric(value: unknown, type: SpannerType): Typed {
  const pg = type.typeAnnotation === 'PG_NUMERIC';
  const what = pg
    ? 'a decimal string, or "NaN"'
    : 'a decimal string, at most 29 digits before the point and 9 after';
  if (pg && value === 'NaN') return ok(value);
  const m = typeof value === 'string' ? DECIMAL.exec(value) : null;
  if (!m) return expected(type, what, value);
  const whole = (m[1] ?? '').replace(/^0+(?=\d)/, '');
  const fraction = (m[2] ?? m[3] ?? '').replace(/0+$/, '');
  if (!pg && (whole.length > 29 || fraction.length > 9)) return expected(type, what, value);
  const zero = /^0*$/.test(whole) && fraction === '';
  const sign = (value as string).startsWith('-') && !zero ? '-' : '';
  return ok(`${sign}${whole || '0'}${fraction ? `.${fraction}` : ''}`);
}

function timestamp(value: unknown, type: SpannerType): Typed {
  if (value === COMMIT_TIMESTAMP) return ok(value);
  try {
    if (typeof value === 'string') return ok(formatTimestamp(parseTimestamp(value)));
  } catch {
    // Falls through to the problem below, which says what is expected.
  }
  return expected(type, `RFC 3339 with up to nine fractional digits, or "${COMMIT_TIMESTAMP}"`, value);
}

function date(value: unknown, type: SpannerType): Typed {
  try {
    if (typeof value === 'string' && parseDate(value) !== undefined) return ok(value);
  } catch {
    // Falls through.
  }
  return expected(type, 'YYYY-MM-DD', value);
}

/** A JSON path of a member (`.a`, or `["a b"]` when it is not an identifier). */
const member = (key: string) => (/^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`);

/**
 * The first number in a parsed JSON value that the body's parsing may have changed, as a problem: an integer
 * beyond ±2^53 has been rounded (9007199254740993 reads as 9007199254740992), a number beyond a double's
 * range reads as Infinity (which JSON.stringify turns into null). Spanner keeps JSON integers to 64 bits, so
 * writing the parsed value would store another number than the producer sent — refused rather than changed.
 */
function changedNumber(value: unknown, path: string): string | undefined {
  if (typeof value === 'number') {
    if (!Number.isFinite(value))
      return (
        `the JSON number at ${path} is beyond the range of a double (parsing made it ${value}); ` +
        'it cannot be written as sent'
      );
    if (Number.isInteger(value) && !Number.isSafeInteger(value))
      return (
        `the JSON number at ${path} (${value} as parsed) is an integer beyond ±2^53: parsing may have ` +
        'rounded it, so it cannot be written exactly — send it as a string inside the JSON value'
      );
    return undefined;
  }
  if (Array.isArray(value)) {
    for (const [i, e] of value.entries()) {
      const p = changedNumber(e, `${path}[${i}]`);
      if (p) return p;
    }
    return undefined;
  }
  if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      const p = changedNumber(v, `${path}${member(k)}`);
      if (p) return p;
    }
  return undefined;
}

function json(value: unknown, type: SpannerType): Typed {
  // The value is the JSON document itself: an object, array, number, string or boolean.
  const changed = changedNumber(value, '$');
  if (changed) return { ok: false, problem: changed };
  const text = JSON.stringify(value);
  return text === undefined ? expected(type, 'a JSON value', value) : ok(text);
}

function scalar(value: unknown, type: SpannerType): Typed {
  switch (type.code) {
    case 'INT64':
    case 'ENUM':
      return int64(value, type);
    case 'FLOAT64':
      return float(value, type);
    case 'FLOAT32':
      return float(value, type, FLOAT32_MAX);
    case 'NUMERIC':
      return numeric(value, type);
    case 'BOOL':
      return typeof value === 'boolean' ? ok(value) : expected(type, 'true or false', value);
    case 'STRING':
      return typeof value === 'string' ? ok(value) : expected(type, 'a string', value);
    case 'BYTES':
    case 'PROTO':
      // Canonical base64: 'QR==' decodes to the byte of 'QQ==' (the trailing bits are dropped), and a row's
      // identity for per-key ordering must be its bytes, not one spelling of them.
      return typeof value === 'string' && BASE64.test(value)
        ? ok(Buffer.from(value, 'base64').toString('base64'))
        : expected(type, 'base64', value);
    case 'TIMESTAMP':
      return timestamp(value, type);
    case 'DATE':
      return date(value, type);
    case 'JSON':
      return json(value, type);
    case 'UUID':
      return typeof value === 'string' && UUID.test(value)
        ? ok(value.toLowerCase())
        : expected(type, 'a UUID', value);
    case 'INTERVAL':
      return typeof value === 'string' && /^-?P/.test(value)
        ? ok(value)
        : expected(type, 'an ISO 8601 duration', value);
    default:
      return {
        ok: false,
        problem: `columns of type ${formatSpannerType(type)} cannot be written by the writer`,
      };
  }
}

/** Types one value for a column of `type`; null is SQL NULL (NOT NULL is Spanner's to enforce). */
export function typeValue(value: unknown, type: SpannerType): Typed {
  if (value === null) return ok(null);
  if (type.code !== 'ARRAY') return scalar(value, type);
  const element = type.arrayElementType;
  if (!Array.isArray(value) || !element) return expected(type, 'an array', value);
  const out: WireValue[] = [];
  for (const [i, e] of value.entries()) {
    const typed = e === null ? ok(null) : scalar(e, element);
    if (!typed.ok) return { ok: false, problem: `[${i}]: ${typed.problem}` };
    out.push(typed.value);
  }
  return ok(out);
}

/** Bytes of a typed value as the service sees it: the UTF-8 text of strings (BYTES as base64), 8 per number. */
export function wireBytes(value: WireValue): number {
  if (value === null) return 1;
  if (typeof value === 'boolean') return 1;
  if (typeof value === 'number') return 8;
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8');
  return value.reduce<number>((n, e) => n + wireBytes(e), 0);
}
