/**
 * Operators with ZetaSQL's signatures: comparisons (STRUCT equality, NaN-aware floats, NUMERIC by value),
 * arithmetic (overflow-checked INT64, exact NUMERIC, GoogleSQL's FLOAT64 division), concatenation, AND / OR /
 * NOT, IS, IN (lists, subqueries, UNNEST) and CASE.
 */
import { Code } from '../hooks';
import { ql } from '../storage';
import type { Expr } from './ast';
import { any, compileExpr, startPos } from './compile-expr';
import { compileQuery } from './compile-query';
import { convert, typeArg } from './convert';
import type { CompileCtx, Scope } from './scope';
import { arrayOf, isNumeric, noSignature, type SqlType, supertype, T, type Typed, typeName } from './typing';

export function unary(op: string, x: Typed, cx: CompileCtx, pos: number): Typed {
  if (op === 'NOT') {
    const b =
      convert(x, T.BOOL, cx) ?? noSignature('operator NOT', [x.type], 'NOT BOOL', cx.dialect, cx.at(pos));
    return { sql: `(NOT ${b.sql})`, type: T.BOOL, agg: x.agg };
  }
  if (op === 'BITNOT') {
    if (x.type.code !== 'INT64') noSignature('operator ~', [x.type], '~INT64', cx.dialect, cx.at(pos));
    return { sql: `(~${x.sql})`, type: T.INT64, agg: x.agg };
  }
  if (!isNumeric(x.type))
    noSignature(
      `operator ${op === 'NEG' ? '-' : '+'}`,
      [x.type],
      `${op === 'NEG' ? '-' : '+'}INT64; ${op === 'NEG' ? '-' : '+'}FLOAT64; ${op === 'NEG' ? '-' : '+'}NUMERIC`,
      cx.dialect,
      cx.at(pos),
    );
  if (op === 'PLUS') return x;
  return { sql: `sp_neg(${typeArg(x.type)}, ${x.sql})`, type: x.type, agg: x.agg };
}

/** Converts every operand to their supertype, or throws "No matching signature". */
export function unify(xs: [Typed, Typed], cx: CompileCtx, what: string, pos: number): [Typed, Typed];
export function unify(
  xs: [Typed, Typed, Typed],
  cx: CompileCtx,
  what: string,
  pos: number,
): [Typed, Typed, Typed];
export function unify(xs: Typed[], cx: CompileCtx, what: string, pos: number): Typed[];
export function unify(xs: Typed[], cx: CompileCtx, what: string, pos: number): Typed[] {
  const t = supertype(xs, cx.dialect);
  const sig = what.startsWith('operator ') ? `ANY ${what.slice(9)} ANY` : 'T, T';
  if (!t)
    return noSignature(
      what,
      xs.map((x) => x.type),
      sig,
      cx.dialect,
      cx.at(pos),
    );
  return xs.map(
    (x) =>
      convert(x, t, cx) ??
      noSignature(
        what,
        xs.map((y) => y.type),
        sig,
        cx.dialect,
        cx.at(pos),
      ),
  );
}

/** The SQL whose SQLite ordering is the type's ordering (NUMERIC compares by value). */
export function orderKey(x: Typed): string {
  return x.type.code === 'NUMERIC' ? `sp_nkey(${x.sql})` : x.sql;
}

export function binary(op: string, le: Expr, re: Expr, s: Scope, cx: CompileCtx, pos: number): Typed {
  if (op === 'AND' || op === 'OR') {
    const [l, r] = [compileExpr(le, s, cx, T.BOOL), compileExpr(re, s, cx, T.BOOL)];
    const lb = convert(l, T.BOOL, cx);
    const rb = convert(r, T.BOOL, cx);
    if (!lb || !rb)
      noSignature(`operator ${op}`, [l.type, r.type], `BOOL ${op} ([BOOL, ...])`, cx.dialect, cx.at(pos));
    return { sql: `(${lb.sql} ${op} ${rb.sql})`, type: T.BOOL, agg: any(l, r) };
  }
  const l = compileExpr(le, s, cx);
  const r = compileExpr(re, s, cx, l.flex ? undefined : l.type);
  if (['=', '!=', '<', '>', '<=', '>='].includes(op)) return compare(op, l, r, cx, pos);
  if (op === '||') return concat(l, r, cx, pos);
  if (['&', '|', '^', '<<', '>>'].includes(op)) {
    const [a, b] = unify([l, r], cx, `operator ${op}`, pos);
    if (a.type.code !== 'INT64')
      noSignature(`operator ${op}`, [l.type, r.type], `INT64 ${op} INT64`, cx.dialect, cx.at(pos));
    const sql = op === '^' ? `((${a.sql} | ${b.sql}) - (${a.sql} & ${b.sql}))` : `(${a.sql} ${op} ${b.sql})`;
    return { sql, type: T.INT64, agg: any(l, r) };
  }
  return arithmetic(op, l, r, cx, pos);
}

function compare(op: string, l: Typed, r: Typed, cx: CompileCtx, pos: number): Typed {
  const [a, b] = unify([l, r], cx, `operator ${op}`, pos);
  const t = a.type;
  const eq = op === '=' || op === '!=';
  if (t.code === 'ARRAY' || t.code === 'JSON' || t.code === 'PROTO' || (t.code === 'STRUCT' && !eq)) {
    const what = eq ? 'Equality' : 'Less than';
    cx.fail(
      cx.pg
        ? `operator does not exist: ${typeName(t, cx.dialect)} ${op} ${typeName(t, cx.dialect)}`
        : `${what} is not defined for arguments of type ${typeName(t, cx.dialect)}`,
      pos,
    );
  }
  if (t.code === 'STRUCT')
    return {
      sql: `(${op === '!=' ? 'NOT ' : ''}sp_struct_eq(${a.sql}, ${b.sql}))`,
      type: T.BOOL,
      agg: any(l, r),
    };
  if (t.code === 'FLOAT64' || t.code === 'FLOAT32')
    return { sql: `sp_fcmp(${a.sql}, ${ql(op)}, ${b.sql}, ${cx.pg ? 1 : 0})`, type: T.BOOL, agg: any(l, r) };
  return { sql: `(${orderKey(a)} ${op} ${orderKey(b)})`, type: T.BOOL, agg: any(l, r) };
}

function concat(l: Typed, r: Typed, cx: CompileCtx, pos: number): Typed {
  if (l.type.code === 'ARRAY' && r.type.code === 'ARRAY') {
    const [a, b] = unify([l, r], cx, 'operator ||', pos);
    return { sql: `sp_array_concat(${a.sql}, ${b.sql})`, type: a.type, agg: any(l, r) };
  }
  const [a, b] = unify([l, r], cx, 'operator ||', pos);
  if (a.type.code !== 'STRING' && a.type.code !== 'BYTES')
    noSignature(
      'operator ||',
      [l.type, r.type],
      'STRING || STRING; BYTES || BYTES; ARRAY || ARRAY',
      cx.dialect,
      cx.at(pos),
    );
  return { sql: `sp_concat(${a.sql}, ${b.sql})`, type: a.type, agg: any(l, r) };
}

function arithmetic(op: string, l: Typed, r: Typed, cx: CompileCtx, pos: number): Typed {
  const sig = `INT64 ${op} INT64; NUMERIC ${op} NUMERIC; FLOAT64 ${op} FLOAT64`;
  if (!isNumeric(l.type) || !isNumeric(r.type)) {
    if (!(l.flex === 'null' || l.flex === 'param' || r.flex === 'null' || r.flex === 'param'))
      noSignature(`operator ${op}`, [l.type, r.type], sig, cx.dialect, cx.at(pos));
  }
  let [a, b] = unify([l, r], cx, `operator ${op}`, pos);
  if (!isNumeric(a.type)) noSignature(`operator ${op}`, [l.type, r.type], sig, cx.dialect, cx.at(pos));
  if (op === '/' && !cx.pg && a.type.code === 'INT64')
    [a, b] = [convert(a, T.FLOAT64, cx) as Typed, convert(b, T.FLOAT64, cx) as Typed];
  if (op === '%' && !(a.type.code === 'INT64' || a.type.code === 'NUMERIC'))
    noSignature('operator %', [l.type, r.type], 'INT64 % INT64; NUMERIC % NUMERIC', cx.dialect, cx.at(pos));
  const t = a.type;
  return { sql: `sp_arith(${ql(op)}, ${typeArg(t)}, ${a.sql}, ${b.sql})`, type: t, agg: any(l, r) };
}

export function isExpr(
  inner: Expr,
  what: 'NULL' | 'TRUE' | 'FALSE',
  not: boolean,
  s: Scope,
  cx: CompileCtx,
): Typed {
  const x = compileExpr(inner, s, cx, what === 'NULL' ? undefined : T.BOOL);
  if (what === 'NULL') return { sql: `(${x.sql} IS ${not ? 'NOT ' : ''}NULL)`, type: T.BOOL, agg: x.agg };
  const b =
    convert(x, T.BOOL, cx) ??
    noSignature(`operator IS ${what}`, [x.type], `BOOL IS ${what}`, cx.dialect, cx.at(inner.pos));
  return { sql: `(${b.sql} IS ${not ? 'NOT ' : ''}${what === 'TRUE' ? 1 : 0})`, type: T.BOOL, agg: x.agg };
}

export function inExpr(e: Expr & { k: 'in' }, s: Scope, cx: CompileCtx): Typed {
  const x = compileExpr(e.e, s, cx);
  const not = e.not ? 'NOT ' : '';
  const pos = startPos(e);
  if (e.list) {
    const items = e.list.map((i) => compileExpr(i, s, cx, x.flex ? undefined : x.type));
    const [a, ...rest] = unify([x, ...items], cx, 'operator IN', pos);
    const typed = a as Typed;
    if (typed.type.code === 'STRUCT' || typed.type.code === 'ARRAY' || typed.type.code === 'JSON')
      cx.fail(
        `IN is not supported for values of type ${typeName(typed.type, cx.dialect)} by the emulator`,
        pos,
        Code.UNIMPLEMENTED,
      );
    return {
      sql: `(${orderKey(typed)} ${not}IN (${rest.map(orderKey).join(', ')}))`,
      type: T.BOOL,
      agg: any(x, ...items),
    };
  }
  if (e.unnest) {
    const arr = compileExpr(e.unnest, s, cx, x.flex ? undefined : arrayOf(x.type));
    if (arr.type.code !== 'ARRAY')
      cx.fail(`Second argument of IN UNNEST must be an array but was ${typeName(arr.type, cx.dialect)}`, pos);
    const el = arr.type.arrayElementType as SqlType;
    const a =
      convert(x, el, cx) ??
      noSignature('operator IN UNNEST', [x.type, el], 'ANY IN UNNEST(ARRAY<ANY>)', cx.dialect, cx.at(pos));
    const item = { sql: `sp_from_json_each(value, ${typeArg(el)})`, type: el };
    return {
      sql: `(${orderKey(a)} ${not}IN (SELECT ${orderKey(item)} FROM json_each(${arr.sql})))`,
      type: T.BOOL,
      agg: any(x, arr),
    };
  }
  const q = compileQuery(e.query as NonNullable<typeof e.query>, cx, s);
  if (q.cols.length !== 1) cx.fail('Subquery of IN must have only one output column', pos);
  const col = q.cols[0] as { type: SqlType };
  const [a] = unify([x, { sql: 'c0', type: col.type }], cx, 'operator IN', pos);
  const key = col.type.code === 'NUMERIC' ? 'sp_nkey("c0")' : '"c0"';
  return {
    sql: `(${orderKey(a as Typed)} ${not}IN (SELECT ${key} FROM (${q.sql})))`,
    type: T.BOOL,
    agg: x.agg,
  };
}

export function caseExpr(e: Expr & { k: 'case' }, s: Scope, cx: CompileCtx, expect?: SqlType): Typed {
  const results = e.whens.map((w) => compileExpr(w.result, s, cx, expect));
  const other = e.else ? compileExpr(e.else, s, cx, expect) : undefined;
  const unified = unify([...results, ...(other ? [other] : [])], cx, 'operator CASE', e.pos);
  let operand: Typed | undefined;
  const conds = e.whens.map((w) => {
    if (!e.operand) {
      const c = compileExpr(w.when, s, cx, T.BOOL);
      return (
        convert(c, T.BOOL, cx) ??
        cx.fail(`CASE WHEN should return type BOOL, but returns ${typeName(c.type, cx.dialect)}`, w.when.pos)
      ).sql;
    }
    operand ??= compileExpr(e.operand, s, cx);
    const [a, b] = unify([operand, compileExpr(w.when, s, cx)], cx, 'operator =', e.pos);
    return `${orderKey(a as Typed)} = ${orderKey(b as Typed)}`;
  });
  const whens = conds.map((c, i) => `WHEN ${c} THEN ${(unified[i] as Typed).sql}`).join(' ');
  const elseSql = other ? ` ELSE ${(unified[unified.length - 1] as Typed).sql}` : '';
  return {
    sql: `(CASE ${whens}${elseSql} END)`,
    type: (unified[0] as Typed).type,
    agg: unified.some((u) => u.agg),
  };
}
