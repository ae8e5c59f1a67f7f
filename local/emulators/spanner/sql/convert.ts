/**
 * Implicit conversions in compiled SQL: literals rendered in stored form, NULLs and untyped parameters
 * taking their context's type, and the numeric widenings (INT64 → NUMERIC → FLOAT64).
 */
import { Code, SpannerError } from '../hooks';
import { ql } from '../storage';
import { type StoredValue, wireToStored } from '../values';
import { castValue } from './cast';
import type { CompileCtx } from './scope';
import { coercible, literalFits, type SqlType, sameType, T, type Typed } from './typing';

/** The SQL literal of a stored value. */
export function sqlLiteral(v: StoredValue): string {
  if (v === null) return 'NULL';
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') {
    if (v === Number.POSITIVE_INFINITY) return '1e999';
    if (v === Number.NEGATIVE_INFINITY) return '-1e999';
    const s = String(v);
    return /[.eE]/.test(s) ? s : `${s}.0`;
  }
  if (Buffer.isBuffer(v)) return `X'${v.toString('hex')}'`;
  return ql(v);
}

/** A type as the JSON text argument runtime functions take. */
export function typeArg(t: SqlType): string {
  return ql(JSON.stringify(t));
}

/** SQL converting a value of `from` to the wider numeric type `to`. */
function widen(sql: string, from: SqlType, to: SqlType): string {
  if (to.code === 'NUMERIC') return from.code === 'INT64' ? `CAST(${sql} AS TEXT)` : sql;
  if (to.code === 'FLOAT64' || to.code === 'FLOAT32')
    return from.code === 'FLOAT32' ? sql : `CAST(${sql} AS REAL)`;
  return sql;
}

function literalAs(x: Typed, to: SqlType, cx: CompileCtx): string {
  const text = x.text ?? '';
  try {
    if (x.flex === 'string') return sqlLiteral(castValue(text, T.STRING, to, false));
    return sqlLiteral(wireToStored(text, to));
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new SpannerError(
      Code.INVALID_ARGUMENT,
      `Could not cast literal "${text}" to type ${to.code}: ${why}${cx.at(-1)}`,
    );
  }
}

/** `x` as a value of `to`, or undefined when no implicit conversion exists. */
export function convert(x: Typed, to: SqlType, cx: CompileCtx): Typed | undefined {
  if (x.flex === 'null') return { ...x, sql: 'NULL', type: to };
  if (x.flex === 'param') {
    cx.params.fix(x.text as string, to);
    return { ...x, type: to, flex: undefined };
  }
  if (sameType(x.type, to)) return { ...x, type: to.typeAnnotation ? to : x.type, flex: x.flex };
  if ((x.flex === 'string' || x.flex === 'int' || x.flex === 'float') && literalFits(x, to, cx.dialect))
    return { ...x, sql: literalAs(x, to, cx), type: to, flex: undefined };
  if (coercible(x.type, to)) return { ...x, sql: widen(x.sql, x.type, to), type: to, flex: undefined };
  if (x.flex === 'stringParam' && literalFits(x, to, cx.dialect))
    return {
      ...x,
      sql: `sp_cast(${x.sql}, ${typeArg(T.STRING)}, ${typeArg(to)}, 0)`,
      type: to,
      flex: undefined,
    };
  return undefined;
}

/** `x` converted to `to`, or `onFail()`'s error. */
export function convertOr(x: Typed, to: SqlType, cx: CompileCtx, onFail: () => never): Typed {
  return convert(x, to, cx) ?? onFail();
}
