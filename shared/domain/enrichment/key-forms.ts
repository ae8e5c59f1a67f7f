/**
 * The identity of a dimension key, so a requested key and the row Spanner returns for it are matched whatever
 * textual form each side carries: a change-stream mod, a query result and a read result all use Spanner's
 * wire form, but a value has more than one spelling in it (a TIMESTAMP with 3 or 9 fractional digits, a
 * NUMERIC `1.50` or `1.5`, a FLOAT64 `2` as a number or text, base64 with or without padding, a UUID in
 * either case). Each key value is reduced to one canonical text per type; nothing goes through `Date` or a
 * JS number where precision could be lost (TIMESTAMP to the nanosecond, INT64 over the whole range).
 */
import type { JsonValue, SpannerType } from '../change-record';
import { parseTimestamp } from '../timestamp';

/** The canonical text of a decimal (`-001.500` → `-1.5`, `-0` → `0`); NaN and other text unchanged. */
function canonicalDecimal(text: string): string {
  const m = /^([+-]?)0*(\d*)(?:\.(\d*?)0*)?$/.exec(text.trim());
  if (!m) return text;
  const whole = m[2] === '' ? '0' : (m[2] as string);
  const fraction = m[3] ?? '';
  const digits = fraction === '' ? whole : `${whole}.${fraction}`;
  return m[1] === '-' && /[1-9]/.test(digits) ? `-${digits}` : digits;
}

/** The canonical text of a FLOAT64 / FLOAT32 wire value (a number, or `"NaN"`, `"Infinity"`, `"-Infinity"`). */
function canonicalFloat(value: JsonValue): string {
  const n = typeof value === 'number' ? value : Number(value);
  if (Number.isNaN(n)) return 'NaN';
  // Spanner orders -0.0 and 0.0 as one key.
  return Object.is(n, -0) ? '0' : String(n);
}

/** One key value's canonical text for a column of `type` (NULL stays null, apart from any text). */
export function keyValueIdentity(type: SpannerType, value: JsonValue): string | null {
  if (value === null) return null;
  switch (type.code) {
    case 'INT64':
    case 'ENUM':
      return /^[+-]?\d+$/.test(String(value)) ? BigInt(String(value)).toString() : String(value);
    case 'FLOAT64':
    case 'FLOAT32':
      return canonicalFloat(value);
    case 'NUMERIC':
      return canonicalDecimal(String(value));
    case 'TIMESTAMP':
      return parseTimestamp(String(value)).toString();
    case 'BYTES':
    case 'PROTO':
      return Buffer.from(String(value), 'base64').toString('base64');
    case 'UUID':
      return String(value).toLowerCase();
    default:
      return typeof value === 'string' ? value : JSON.stringify(value);
  }
}

/** A whole key's identity: its values' canonical texts in declared primary-key order. */
export function keyIdentity(types: readonly SpannerType[], key: readonly JsonValue[]): string {
  return JSON.stringify(key.map((v, i) => keyValueIdentity(types[i] ?? { code: 'STRING' }, v)));
}
