/**
 * CAST / SAFE_CAST between stored values, with ZetaSQL's conversions: numbers round half away from zero,
 * floats print like `1.5`, `1e+20`, `inf`, `nan`, timestamps print in the default zone, and a value that
 * does not convert is an OUT_OF_RANGE error (NULL under SAFE_CAST).
 */
import { Code, SpannerError } from '../hooks';
import { jsonToWire, type StoredValue, storedToWire, wireToStored } from '../values';
import { checkGsqlNumeric, type Decimal, formatDecimal, parseDecimal, roundDecimal } from './decimal';
import { extract, stringToTs, tsToString } from './time';
import type { SqlType } from './typing';

class CastError extends SpannerError {}

function fail(message: string): never {
  throw new CastError(Code.OUT_OF_RANGE, message);
}

function asFloat(v: StoredValue): number {
  return v === 'NaN' ? Number.NaN : Number(v);
}

/** The text of a float: shortest round-trip digits; `inf` / `nan` (PostgreSQL: `Infinity` / `NaN`). */
export function floatText(x: number, pg: boolean): string {
  if (Number.isNaN(x)) return pg ? 'NaN' : 'nan';
  if (!Number.isFinite(x)) return pg ? (x > 0 ? 'Infinity' : '-Infinity') : x > 0 ? 'inf' : '-inf';
  return String(x);
}

function toInt(v: StoredValue, from: SqlType): bigint {
  switch (from.code) {
    case 'BOOL':
      return v === 1n || v === 1 ? 1n : 0n;
    case 'FLOAT64':
    case 'FLOAT32': {
      const x = asFloat(v);
      if (!Number.isFinite(x))
        fail(`Illegal conversion of non-finite floating point number to an integer: ${floatText(x, false)}`);
      const r = BigInt(Math.sign(x) * Math.round(Math.abs(x)));
      if (r > 9223372036854775807n || r < -9223372036854775808n) fail(`int64 out of range: ${x}`);
      return r;
    }
    case 'NUMERIC':
      return roundDecimal(parseDecimal(String(v)), 0).v;
    case 'STRING': {
      const t = String(v).trim();
      if (!/^[+-]?(\d+|0[xX][0-9a-fA-F]+)$/.test(t)) fail(`Bad int64 value: ${String(v)}`);
      const n = t.replace(/^([+-]?)0[xX]/, '$10x');
      const r = n.startsWith('-') ? -BigInt(n.slice(1)) : BigInt(n.replace(/^\+/, ''));
      if (r > 9223372036854775807n || r < -9223372036854775808n) fail(`Bad int64 value: ${String(v)}`);
      return r;
    }
    default:
      return BigInt(v as bigint);
  }
}

function toFloat(v: StoredValue, from: SqlType): number | string {
  let x: number;
  if (from.code === 'STRING') {
    const t = String(v).trim().toLowerCase();
    const special: Record<string, number> = {
      inf: Infinity,
      '+inf': Infinity,
      '-inf': -Infinity,
      infinity: Infinity,
      '-infinity': -Infinity,
      nan: Number.NaN,
    };
    x =
      t in special
        ? (special[t] as number)
        : t !== '' && !Number.isNaN(Number(t))
          ? Number(t)
          : fail(`Bad double value: ${String(v)}`);
  } else x = from.code === 'BOOL' ? Number(v) : asFloat(v);
  return Number.isNaN(x) ? 'NaN' : x;
}

function toNumeric(v: StoredValue, from: SqlType, to: SqlType): string {
  const pg = to.typeAnnotation === 'PG_NUMERIC';
  let text: string;
  if (from.code === 'FLOAT64' || from.code === 'FLOAT32') {
    const x = asFloat(v);
    if (Number.isNaN(x) && pg) return 'NaN';
    if (!Number.isFinite(x))
      fail(`Illegal conversion of non-finite floating point number to numeric: ${floatText(x, false)}`);
    text = x.toPrecision(17);
  } else text = String(v);
  if (pg && text === 'NaN') return text;
  let d: Decimal;
  try {
    d = parseDecimal(text);
  } catch {
    return fail(`Invalid NUMERIC value: ${text}`);
  }
  return formatDecimal(pg ? d : checkGsqlNumeric(d));
}

function toText(v: StoredValue, from: SqlType, pg: boolean): string {
  switch (from.code) {
    case 'BOOL':
      return v === 1n || v === 1 ? 'true' : 'false';
    case 'FLOAT64':
    case 'FLOAT32':
      return floatText(asFloat(v), pg);
    case 'BYTES': {
      const b = v as Buffer;
      const s = b.toString('utf8');
      if (!Buffer.from(s, 'utf8').equals(b)) fail('Invalid UTF-8 in BYTES cast to STRING');
      return s;
    }
    case 'TIMESTAMP':
      return tsToString(String(v));
    default:
      return String(v);
  }
}

function castScalar(v: StoredValue, from: SqlType, to: SqlType): StoredValue {
  const pg = to.typeAnnotation?.startsWith('PG_') || from.typeAnnotation?.startsWith('PG_') || false;
  switch (to.code) {
    case 'INT64':
      return toInt(v, from);
    case 'FLOAT64':
    case 'FLOAT32':
      return toFloat(v, from);
    case 'NUMERIC':
      return toNumeric(v, from, to);
    case 'STRING':
      return toText(v, from, pg);
    case 'BOOL':
      if (from.code === 'INT64') return v === 0n || v === 0 ? 0n : 1n;
      if (from.code === 'STRING') {
        const t = String(v).trim().toLowerCase();
        if (t === 'true' || (pg && ['t', 'yes', 'on', '1'].includes(t))) return 1n;
        if (t === 'false' || (pg && ['f', 'no', 'off', '0'].includes(t))) return 0n;
        return fail(`Bad bool value: ${String(v)}`);
      }
      return v;
    case 'BYTES':
      if (from.code === 'UUID') return Buffer.from(String(v).replaceAll('-', ''), 'hex');
      return from.code === 'STRING' ? Buffer.from(String(v), 'utf8') : v;
    case 'DATE':
      if (from.code === 'TIMESTAMP') return extract('DATE', String(v), true);
      if (from.code === 'STRING') return wireToStoredOr(String(v).trim(), to, `Invalid date: '${String(v)}'`);
      return v;
    case 'TIMESTAMP':
      if (from.code === 'DATE' || from.code === 'STRING') return stringToTs(String(v));
      return v;
    case 'JSON':
    case 'UUID':
      return wireToStoredOr(String(v), to, `Invalid ${to.code} value: ${String(v)}`);
    default:
      return v;
  }
}

function wireToStoredOr(text: string, to: SqlType, message: string): StoredValue {
  try {
    return wireToStored(text, to);
  } catch {
    return fail(message);
  }
}

/** CAST(v AS to) of a stored value of type `from`; SAFE_CAST answers NULL for a value that does not convert. */
export function castValue(v: StoredValue, from: SqlType, to: SqlType, safe: boolean): StoredValue {
  if (v === null) return null;
  try {
    if (to.code === 'ARRAY' && from.code === 'ARRAY') {
      const fe = from.arrayElementType as SqlType;
      const te = to.arrayElementType as SqlType;
      const list = jsonToWire(JSON.parse(String(v)), from) as Array<unknown>;
      const out = list.map((e) =>
        e === null ? null : castValue(wireToStored(e as never, fe), fe, te, false),
      );
      return wireToStored(out.map((x) => (x === null ? null : storedToWire(x, te))) as never, to);
    }
    return castScalar(v, from, to);
  } catch (err) {
    if (safe && err instanceof SpannerError) return null;
    throw err;
  }
}
