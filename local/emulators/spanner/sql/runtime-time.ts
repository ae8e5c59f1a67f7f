/**
 * SQLite functions for dates, timestamps, float math and the aggregates SQLite computes differently
 * (SUM / AVG of NUMERIC exactly, MIN / MAX of NUMERIC by value, NaN-aware float sums).
 */
import type Sqlite from 'better-sqlite3';
import { Code, SpannerError } from '../hooks';
import type { StoredValue } from '../values';
import { decimalKey, decimalOp, formatDecimal, parseDecimal } from './decimal';
import {
  civil,
  dateAdd,
  dateDays,
  dateDiff,
  daysDate,
  extract,
  nsTs,
  truncDays,
  tsNs,
  tsTrunc,
  UNIT_NS,
} from './time';
import { defineAggregate, ty } from './type-arg';

function bad(message: string): never {
  throw new SpannerError(Code.OUT_OF_RANGE, message);
}

function unit(part: StoredValue): bigint {
  return UNIT_NS[String(part)] ?? bad(`Unsupported date part ${String(part)}`);
}

function registerTime(db: Sqlite.Database, nowNs: () => bigint): void {
  // Wrapped functions take rest arguments, so SQLite must be told they accept any count.
  const det = { deterministic: true, safeIntegers: true, varargs: true } as const;
  const nn =
    (f: (...xs: StoredValue[]) => StoredValue) =>
    (...xs: StoredValue[]) =>
      xs.some((x) => x === null) ? null : f(...xs);
  db.function(
    'sp_ts_add',
    det,
    nn((t, n, p) => nsTs(tsNs(String(t)) + BigInt(n as bigint) * unit(p))),
  );
  db.function(
    'sp_ts_diff',
    det,
    nn((a, b, p) => (tsNs(String(a)) - tsNs(String(b))) / unit(p)),
  );
  db.function(
    'sp_ts_trunc',
    det,
    nn((t, p) => tsTrunc(String(t), String(p))),
  );
  db.function(
    'sp_unix',
    det,
    nn((t, p) => {
      const ns = tsNs(String(t));
      const u = unit(p);
      const q = ns / u;
      return ns % u !== 0n && ns < 0n ? q - 1n : q;
    }),
  );
  db.function(
    'sp_from_unix',
    det,
    nn((n, p) => nsTs(BigInt(n as bigint) * unit(p))),
  );
  db.function(
    'sp_date_add',
    det,
    nn((d, n, p) => dateAdd(String(d), BigInt(n as bigint), String(p))),
  );
  db.function(
    'sp_date_diff',
    det,
    nn((a, b, p) => dateDiff(String(a), String(b), String(p))),
  );
  db.function(
    'sp_date_trunc',
    det,
    nn((d, p) => daysDate(truncDays(dateDays(String(d)), String(p)))),
  );
  db.function(
    'sp_extract',
    det,
    nn((p, v, isTs) => extract(String(p), String(v), isTs === 1n)),
  );
  db.function(
    'sp_date_from_parts',
    det,
    nn((y, m, d) =>
      daysDate(
        dateDays(`${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`),
      ),
    ),
  );
  db.function(
    'sp_unix_date',
    det,
    nn((d) => dateDays(String(d))),
  );
  db.function(
    'sp_date_from_unix',
    det,
    nn((n) => daysDate(BigInt(n as bigint))),
  );
  db.function('sp_current_date', { deterministic: false, safeIntegers: true }, () =>
    daysDate(civil(nowNs()).days),
  );
}

function float(x: StoredValue): number {
  return x === 'NaN' ? Number.NaN : Number(x);
}

function stored(x: number): number | string {
  return Number.isNaN(x) ? 'NaN' : x;
}

function registerMath(db: Sqlite.Database): void {
  const det = { deterministic: true, safeIntegers: true } as const;
  const f1 = (fn: (x: number) => number, domain?: (x: number) => boolean) => (x: StoredValue) => {
    if (x === null) return null;
    const v = float(x);
    if (domain && !domain(v)) bad(`Argument is out of the function's domain: ${v}`);
    return stored(fn(v));
  };
  db.function(
    'sp_sqrt',
    det,
    f1(Math.sqrt, (x) => !(x < 0)),
  );
  db.function('sp_exp', det, f1(Math.exp));
  db.function(
    'sp_ln',
    det,
    f1(Math.log, (x) => !(x <= 0)),
  );
  db.function(
    'sp_log10',
    det,
    f1(Math.log10, (x) => !(x <= 0)),
  );
  db.function('sp_pow', det, (a: StoredValue, b: StoredValue) =>
    a === null || b === null ? null : stored(float(a) ** float(b)),
  );
  db.function('sp_ieee_divide', det, (a: StoredValue, b: StoredValue) =>
    a === null || b === null ? null : stored(float(a) / float(b)),
  );
  db.function('sp_is_nan', det, (x: StoredValue) => (x === null ? null : x === 'NaN' ? 1n : 0n));
  db.function('sp_is_inf', det, (x: StoredValue) =>
    x === null ? null : Math.abs(float(x)) === Infinity ? 1n : 0n,
  );
  db.function('sp_round', det, (x: StoredValue, digits: StoredValue, t: unknown, mode: unknown) => {
    if (x === null || digits === null) return null;
    return roundTo(x, Number(digits), String(ty(t).code), String(mode));
  });
}

/** ROUND / TRUNC / CEIL / FLOOR of a number to `digits` places (half away from zero for ROUND). */
function roundTo(x: StoredValue, digits: number, code: string, mode: string): StoredValue {
  const op = (v: number) =>
    mode === 'ROUND'
      ? Math.sign(v) * Math.round(Math.abs(v))
      : mode === 'TRUNC'
        ? Math.trunc(v)
        : mode === 'CEIL'
          ? Math.ceil(v)
          : Math.floor(v);
  if (code === 'INT64') return x;
  if (code === 'NUMERIC') {
    const d = parseDecimal(String(x));
    const shifted = d.s - digits;
    if (shifted <= 0) return String(x);
    const f = 10n ** BigInt(shifted);
    const q = d.v / f;
    const r = d.v % f;
    let v = q;
    if (mode === 'ROUND' && (r < 0n ? -r : r) * 2n >= f) v += d.v < 0n ? -1n : 1n;
    if (mode === 'CEIL' && r > 0n) v += 1n;
    if (mode === 'FLOOR' && r < 0n) v -= 1n;
    return formatDecimal({ v: digits >= 0 ? v : v * 10n ** BigInt(-digits), s: Math.max(digits, 0) });
  }
  const v = float(x);
  const m = 10 ** digits;
  return stored(digits === 0 ? op(v) : op(v * m) / m);
}

function registerAggregates(db: Sqlite.Database): void {
  defineAggregate(db, 'sp_sum', {
    start: () => ({ n: 0, s: null as StoredValue }),
    step: (acc: { n: number; s: StoredValue }, t: unknown, x: StoredValue) => {
      if (x === null) return acc;
      acc.n++;
      if (ty(t).code === 'NUMERIC')
        acc.s = formatDecimal(decimalOp('+', parseDecimal(String(acc.s ?? '0')), parseDecimal(String(x)), 9));
      else acc.s = stored(float(acc.s ?? 0) + float(x));
      return acc;
    },
    result: (acc: { n: number; s: StoredValue }) => acc.s,
  });
  defineAggregate(db, 'sp_avg', {
    start: () => ({ n: 0n, s: '0' }),
    step: (acc: { n: bigint; s: string }, x: StoredValue) => {
      if (x === null) return acc;
      acc.n++;
      acc.s = formatDecimal(decimalOp('+', parseDecimal(acc.s), parseDecimal(String(x)), 9));
      return acc;
    },
    result: (acc: { n: bigint; s: string }) =>
      acc.n === 0n ? null : formatDecimal(decimalOp('/', parseDecimal(acc.s), { v: acc.n, s: 0 }, 9)),
  });
  for (const [name, sign] of [
    ['sp_nmin', 1],
    ['sp_nmax', -1],
  ] as const)
    defineAggregate(db, name, {
      start: () => null as StoredValue,
      step: (acc: StoredValue, x: StoredValue) =>
        x === null
          ? acc
          : acc === null || sign * (decimalKey(String(x)) < decimalKey(String(acc)) ? 1 : -1) > 0
            ? x
            : acc,
      result: (acc: StoredValue) => acc,
    });
}

/** Registers the time, math and aggregate functions; `nowNs` is the emulator clock. */
export function registerTimeRuntime(db: Sqlite.Database, nowNs: () => bigint): void {
  registerTime(db, nowNs);
  registerMath(db);
  registerAggregates(db);
}
