/**
 * SQLite functions for strings, bytes, JSON and arrays with ZetaSQL's semantics (positions count code
 * points from 1, negative positions count from the end, case mapping is Unicode-aware).
 */
import type Sqlite from 'better-sqlite3';
import { Code, SpannerError, type WireValue } from '../hooks';
import type { StoredValue } from '../values';
import { registerTimeRuntime } from './runtime-time';

function bad(message: string): never {
  throw new SpannerError(Code.OUT_OF_RANGE, message);
}

function chars(x: StoredValue): string[] | Buffer {
  return Buffer.isBuffer(x) ? x : [...String(x)];
}

function join(parts: string[] | Buffer): StoredValue {
  return Buffer.isBuffer(parts) ? parts : parts.join('');
}

/** SUBSTR(value, position[, length]). */
function substr(x: StoredValue, pos: StoredValue, len: StoredValue | undefined): StoredValue {
  if (x === null || pos === null || len === null) return null;
  const cs = chars(x);
  let p = Number(pos);
  if (len !== undefined && Number(len) < 0) bad('Third argument in SUBSTR() cannot be negative');
  if (p < 0) p = Math.max(0, cs.length + p);
  else if (p > 0) p -= 1;
  const end = len === undefined ? cs.length : p + Number(len);
  return join(cs.slice(p, end) as string[] | Buffer);
}

function pad(x: StoredValue, len: StoredValue, with_: StoredValue, left: boolean): StoredValue {
  if (x === null || len === null || with_ === null) return null;
  const n = Number(len);
  if (n < 0) bad('Second argument (length) of LPAD/RPAD cannot be negative');
  const s = [...String(x)];
  const p = [...String(with_)];
  if (s.length >= n) return s.slice(0, n).join('');
  if (p.length === 0) bad('Third argument (pattern) of LPAD/RPAD cannot be empty');
  const fill = Array.from({ length: n - s.length }, (_, i) => p[i % p.length]).join('');
  return left ? fill + s.join('') : s.join('') + fill;
}

function trim(x: StoredValue, set: StoredValue | undefined, mode: string): StoredValue {
  if (x === null || set === null) return null;
  const cs = set === undefined ? [' '] : [...String(set)];
  const s = [...String(x)];
  let [a, b] = [0, s.length];
  if (mode !== 'R') while (a < b && cs.includes(s[a] as string)) a++;
  if (mode !== 'L') while (b > a && cs.includes(s[b - 1] as string)) b--;
  return s.slice(a, b).join('');
}

function regex(pattern: StoredValue, flags = ''): RegExp {
  try {
    return new RegExp(String(pattern), flags);
  } catch (err) {
    return bad(`Cannot parse regular expression: ${(err as Error).message}`);
  }
}

/** JSON_VALUE / JSON_QUERY with a `$.a.b[0]` path. */
function jsonPath(doc: StoredValue, path: StoredValue, scalar: boolean): StoredValue {
  if (doc === null || path === null) return null;
  let v: unknown = JSON.parse(String(doc));
  const p = String(path);
  if (!p.startsWith('$')) bad(`JSONPath must start with '$'`);
  for (const m of p.slice(1).matchAll(/\.([A-Za-z_][A-Za-z0-9_]*)|\.?"([^"]*)"|\[(\d+)\]|\['([^']*)'\]/g)) {
    if (v === null || typeof v !== 'object') return null;
    const key = m[1] ?? m[2] ?? m[4];
    v = key !== undefined ? (v as Record<string, unknown>)[key] : (v as unknown[])[Number(m[3])];
    if (v === undefined) return null;
  }
  if (!scalar) return JSON.stringify(v);
  if (v === null || typeof v === 'object') return null;
  return String(v);
}

function registerStrings(db: Sqlite.Database): void {
  const det = { deterministic: true, safeIntegers: true } as const;
  const text = (f: (s: string) => StoredValue) => (x: StoredValue) => (x === null ? null : f(String(x)));
  db.function('sp_lower', det, (x: StoredValue) =>
    Buffer.isBuffer(x)
      ? Buffer.from(x.toString('latin1').toLowerCase(), 'latin1')
      : text((s) => s.toLowerCase())(x),
  );
  db.function('sp_upper', det, (x: StoredValue) =>
    Buffer.isBuffer(x)
      ? Buffer.from(x.toString('latin1').toUpperCase(), 'latin1')
      : text((s) => s.toUpperCase())(x),
  );
  db.function('sp_substr', { ...det, varargs: true }, (x: StoredValue, p: StoredValue, l?: StoredValue) =>
    substr(x, p, l),
  );
  db.function('sp_strpos', det, (x: StoredValue, y: StoredValue) => {
    if (x === null || y === null) return null;
    const i = String(x).indexOf(String(y));
    return i < 0 ? 0n : BigInt([...String(x).slice(0, i)].length + 1);
  });
  db.function('sp_pad', det, (x: StoredValue, n: StoredValue, p: StoredValue, left: StoredValue) =>
    pad(x, n, p, left === 1n),
  );
  db.function('sp_repeat', det, (x: StoredValue, n: StoredValue) => {
    if (x === null || n === null) return null;
    if (Number(n) < 0) bad('Second argument of REPEAT cannot be negative');
    return String(x).repeat(Number(n));
  });
  db.function('sp_reverse', det, (x: StoredValue) =>
    x === null ? null : Buffer.isBuffer(x) ? Buffer.from(x).reverse() : [...String(x)].reverse().join(''),
  );
  db.function('sp_trim', { ...det, varargs: true }, (mode: StoredValue, x: StoredValue, set?: StoredValue) =>
    trim(x, set, String(mode)),
  );
  db.function('sp_split', { ...det, varargs: true }, (x: StoredValue, d?: StoredValue) => {
    if (x === null || d === null) return null;
    const sep = d === undefined ? ',' : String(d);
    return JSON.stringify(sep === '' ? [...String(x)] : String(x).split(sep));
  });
  db.function('sp_regexp_contains', det, (x: StoredValue, p: StoredValue) =>
    x === null || p === null ? null : regex(p).test(String(x)) ? 1n : 0n,
  );
  db.function('sp_regexp_extract', det, (x: StoredValue, p: StoredValue) => {
    if (x === null || p === null) return null;
    const m = regex(p).exec(String(x));
    return m ? (m[1] ?? m[0]) : null;
  });
  db.function('sp_regexp_replace', det, (x: StoredValue, p: StoredValue, r: StoredValue) =>
    x === null || p === null || r === null
      ? null
      : String(x).replace(regex(p, 'g'), String(r).replace(/\\(\d)/g, '$$$1')),
  );
  db.function('sp_to_base64', det, (x: StoredValue) =>
    x === null ? null : (x as Buffer).toString('base64'),
  );
  db.function('sp_from_base64', det, (x: StoredValue) =>
    x === null ? null : Buffer.from(String(x), 'base64'),
  );
  db.function('sp_json_value', det, (d: StoredValue, p: StoredValue) => jsonPath(d, p, true));
  db.function('sp_json_query', det, (d: StoredValue, p: StoredValue) => jsonPath(d, p, false));
}

function registerArrays(db: Sqlite.Database): void {
  const det = { deterministic: true, safeIntegers: true } as const;
  const list = (x: StoredValue) => JSON.parse(String(x)) as WireValue[];
  db.function('sp_array_concat', { ...det, varargs: true }, (...xs: StoredValue[]) =>
    xs.some((x) => x === null) ? null : JSON.stringify(xs.flatMap(list)),
  );
  db.function('sp_array_reverse', det, (x: StoredValue) =>
    x === null ? null : JSON.stringify(list(x).reverse()),
  );
  db.function(
    'sp_array_to_string',
    { ...det, varargs: true },
    (x: StoredValue, sep: StoredValue, nullText?: StoredValue) => {
      if (x === null || sep === null) return null;
      const items = list(x).flatMap((e) =>
        e === null ? (nullText === undefined || nullText === null ? [] : [String(nullText)]) : [String(e)],
      );
      return items.join(String(sep));
    },
  );
  db.function(
    'sp_generate_array',
    { ...det, varargs: true },
    (a: StoredValue, b: StoredValue, step?: StoredValue) => {
      if (a === null || b === null || step === null) return null;
      const s = step === undefined ? 1n : BigInt(step as bigint);
      if (s === 0n) bad('Sequence step cannot be 0.');
      const out: string[] = [];
      for (
        let v = BigInt(a as bigint);
        s > 0n ? v <= BigInt(b as bigint) : v >= BigInt(b as bigint);
        v += s
      ) {
        out.push(v.toString());
        if (out.length > 16000) bad('GENERATE_ARRAY(...) produced too many elements');
      }
      return JSON.stringify(out);
    },
  );
  db.function('sp_array_length', det, (x: StoredValue) => (x === null ? null : BigInt(list(x).length)));
  db.function('sp_concat', { ...det, varargs: true }, (...xs: StoredValue[]) => {
    if (xs.some((x) => x === null)) return null;
    return Buffer.isBuffer(xs[0]) ? Buffer.concat(xs as Buffer[]) : xs.map(String).join('');
  });
}

/** Registers the string, JSON, array, time and math functions. */
export function registerTextRuntime(db: Sqlite.Database, nowNs: () => bigint): void {
  registerStrings(db);
  registerArrays(db);
  registerTimeRuntime(db, nowNs);
}
