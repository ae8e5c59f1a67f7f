/**
 * The SQLite functions compiled queries call for what SQLite has no equal of: STRUCT and ARRAY values
 * (stored as JSON text of canonical wire values), casts, overflow-checked arithmetic, exact NUMERIC, and
 * element and field access. Type arguments are JSON texts of `google.spanner.v1.Type`, parsed once.
 */
import type Sqlite from 'better-sqlite3';
import { Code, SpannerError, type WireValue } from '../hooks';
import { type StoredValue, storedToWire, wireToStored } from '../values';
import { castValue } from './cast';
import { checkGsqlNumeric, decimalKey, decimalOp, formatDecimal, parseDecimal } from './decimal';
import { registerTextRuntime } from './runtime-text';
import { defineAggregate, encodeJson, ty } from './type-arg';
import type { SqlType } from './typing';

function outOfRange(message: string): never {
  throw new SpannerError(Code.OUT_OF_RANGE, message);
}

const INT_MAX = 9223372036854775807n;
const INT_MIN = -9223372036854775808n;

function intOp(op: string, a: bigint, b: bigint): bigint {
  let r: bigint;
  if ((op === '/' || op === '%' || op === 'DIV' || op === 'MOD') && b === 0n)
    outOfRange(`division by zero: ${a} ${op === 'MOD' ? '%' : op} ${b}`);
  if (op === '+') r = a + b;
  else if (op === '-') r = a - b;
  else if (op === '*') r = a * b;
  else if (op === '%' || op === 'MOD') r = a % b;
  else r = a / b;
  if (r > INT_MAX || r < INT_MIN) outOfRange(`int64 overflow: ${a} ${op} ${b}`);
  return r;
}

function floatOp(op: string, a: number, b: number): number {
  if (op === '/' && b === 0) outOfRange(`division by zero: ${a} / ${b}`);
  if (op === '+') return a + b;
  if (op === '-') return a - b;
  if (op === '*') return a * b;
  if (op === '%' || op === 'MOD') return a % b;
  return a / b;
}

function numericOp(op: string, a: StoredValue, b: StoredValue, t: SqlType): string {
  const pg = t.typeAnnotation === 'PG_NUMERIC';
  if (pg && (a === 'NaN' || b === 'NaN')) return 'NaN';
  const r = decimalOp(op === 'MOD' ? '%' : op, parseDecimal(String(a)), parseDecimal(String(b)), pg ? 16 : 9);
  return formatDecimal(pg ? r : checkGsqlNumeric(r));
}

/** a op b in the result type `t` (INT64 checks overflow, floats keep NaN as its stored text). */
function arith(op: string, t: SqlType, a: StoredValue, b: StoredValue): StoredValue {
  if (a === null || b === null) return null;
  if (t.code === 'INT64') return intOp(op, BigInt(a as bigint), BigInt(b as bigint));
  if (t.code === 'NUMERIC') return numericOp(op, a, b, t);
  const r = floatOp(op, a === 'NaN' ? Number.NaN : Number(a), b === 'NaN' ? Number.NaN : Number(b));
  return Number.isNaN(r) ? 'NaN' : r;
}

/**
 * A float comparison. GoogleSQL: every comparison with NaN is FALSE except `!=`. PostgreSQL: NaN equals NaN
 * and is greater than every other value.
 */
function floatCompare(a: StoredValue, op: string, b: StoredValue, pg: boolean): bigint | null {
  if (a === null || b === null) return null;
  let x = a === 'NaN' ? Number.NaN : Number(a);
  let y = b === 'NaN' ? Number.NaN : Number(b);
  if (pg && (Number.isNaN(x) || Number.isNaN(y))) {
    [x, y] = [Number.isNaN(x) ? 1 : 0, Number.isNaN(y) ? 1 : 0];
  }
  const r =
    op === '='
      ? x === y
      : op === '!='
        ? x !== y
        : op === '<'
          ? x < y
          : op === '>'
            ? x > y
            : op === '<='
              ? x <= y
              : x >= y;
  return r ? 1n : 0n;
}

function element(arr: StoredValue, idx: StoredValue, t: SqlType, mode: string): StoredValue {
  if (arr === null || idx === null) return null;
  const list = JSON.parse(String(arr)) as WireValue[];
  const n = Number(idx) - (mode.endsWith('ORDINAL') ? 1 : 0);
  if (n < 0 || n >= list.length) {
    if (mode.startsWith('SAFE')) return null;
    outOfRange(`Array index ${String(idx)} is out of bounds`);
  }
  return wireToStored(list[n] ?? null, t);
}

/** A json_each value (strings unquoted, booleans 1/0, nested values as JSON text) → stored form. */
function fromJsonEach(v: StoredValue, t: SqlType): StoredValue {
  if (v === null) return null;
  switch (t.code) {
    case 'INT64':
      return BigInt(String(v));
    case 'BOOL':
      return v === 1n || v === 1 ? 1n : 0n;
    case 'FLOAT64':
    case 'FLOAT32':
      return wireToStored(typeof v === 'string' ? v : Number(v), t);
    case 'BYTES':
      return Buffer.from(String(v), 'base64');
    default:
      return v;
  }
}

/** STRUCT equality: FALSE if a field differs, else NULL if a field is NULL, else TRUE. */
function structEq(a: StoredValue, b: StoredValue): bigint | null {
  if (a === null || b === null) return null;
  const [x, y] = [JSON.parse(String(a)) as WireValue[], JSON.parse(String(b)) as WireValue[]];
  let sawNull = false;
  for (const [i, f] of x.entries()) {
    const g = y[i] ?? null;
    if (f === null || g === null) sawNull = true;
    else if (JSON.stringify(f) !== JSON.stringify(g)) return 0n;
  }
  return sawNull ? null : 1n;
}

function registerComposite(db: Sqlite.Database): void {
  const det = { deterministic: true, safeIntegers: true } as const;
  const v = { ...det, varargs: true } as const;
  db.function('sp_struct', v, (t: unknown, ...vals: StoredValue[]) => {
    const fields = ty(t).structType?.fields ?? [];
    return encodeJson(fields.map((f, i) => storedToWire(vals[i] ?? null, f.type)));
  });
  db.function('sp_array', v, (t: unknown, ...vals: StoredValue[]) =>
    encodeJson(vals.map((x) => storedToWire(x, ty(t)))),
  );
  defineAggregate(db, 'sp_array_agg', {
    start: () => [] as WireValue[],
    step: (acc: WireValue[], t: unknown, x: StoredValue) => {
      acc.push(storedToWire(x, ty(t)));
      return acc;
    },
    result: (acc: WireValue[]) => encodeJson(acc),
  });
  db.function('sp_elem', det, (a: StoredValue, i: StoredValue, t: unknown, m: unknown) =>
    element(a, i, ty(t), String(m)),
  );
  db.function('sp_field', det, (s: StoredValue, i: StoredValue, t: unknown) =>
    s === null ? null : wireToStored((JSON.parse(String(s)) as WireValue[])[Number(i)] ?? null, ty(t)),
  );
  db.function('sp_from_json_each', det, (x: StoredValue, t: unknown) => fromJsonEach(x, ty(t)));
  db.function('sp_struct_eq', det, structEq);
}

function registerScalar(db: Sqlite.Database): void {
  const det = { deterministic: true, safeIntegers: true } as const;
  db.function('sp_cast', det, (x: StoredValue, f: unknown, t: unknown, safe: unknown) =>
    castValue(x, ty(f), ty(t), safe === 1n),
  );
  db.function('sp_arith', det, (op: unknown, t: unknown, a: StoredValue, b: StoredValue) =>
    arith(String(op), ty(t), a, b),
  );
  db.function('sp_neg', det, (t: unknown, a: StoredValue) =>
    arith('-', ty(t), ty(t).code === 'INT64' ? 0n : '0', a),
  );
  db.function('sp_fcmp', det, (a: StoredValue, op: unknown, b: StoredValue, pg: unknown) =>
    floatCompare(a, String(op), b, pg === 1n),
  );
  db.function('sp_nkey', det, (x: StoredValue) => (x === null ? null : decimalKey(String(x))));
}

/** Registers every runtime function on a database connection. */
export function registerSqlRuntime(db: Sqlite.Database, nowNs: () => bigint): void {
  registerComposite(db);
  registerScalar(db);
  registerTextRuntime(db, nowNs);
}
