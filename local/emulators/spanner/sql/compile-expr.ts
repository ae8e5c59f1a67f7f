/**
 * Expressions → SQLite with their types decided statically: column references, parameters (typed, or
 * taking their context's type), literals, operators with ZetaSQL's signatures and errors, STRUCT and ARRAY
 * values, subscripts, field access and subqueries. The SQL of a typed expression yields the stored form.
 */
import { Code, SpannerError } from '../hooks';
import { ql } from '../storage';
import { wireToStored } from '../values';
import type { Expr, Query } from './ast';
import { castValue } from './cast';
import { compileQuery } from './compile-query';
import { convert, sqlLiteral, typeArg } from './convert';
import { callFunction } from './functions';
import type { CompileCtx, Scope } from './scope';
import { arrayOf, isNumeric, noSignature, type SqlType, supertype, T, type Typed, typeName } from './typing';

/** Leftmost offset of an expression (ZetaSQL reports errors there). */
export function startPos(e: Expr): number {
  if (e.k === 'binary') return startPos(e.l);
  if (e.k === 'is' || e.k === 'in' || e.k === 'between' || e.k === 'like') return startPos(e.e);
  if (e.k === 'dot' || e.k === 'index') return startPos(e.base);
  return e.pos;
}

/** Compiles an expression; `expect` guides NULLs, untyped parameters and empty arrays. */
export function compileExpr(e: Expr, s: Scope, cx: CompileCtx, expect?: SqlType): Typed {
  switch (e.k) {
    case 'lit':
      return literal(e.kind, e.value, cx, expect);
    case 'typedLit':
      return typedLiteral(e.type, e.value, cx, e.pos);
    case 'param':
      return param(e.name, cx, e.pos, expect);
    case 'ident':
    case 'dot':
      return path(e, s, cx);
    case 'call':
      return callFunction(e, s, cx, expect);
    case 'cast':
      return cast(e.e, e.to, e.safe, s, cx, e.pos);
    case 'unary':
      return unary(e.op, compileExpr(e.e, s, cx), cx, e.pos);
    case 'binary':
      return binary(e.op, e.l, e.r, s, cx, startPos(e));
    default:
      return compileOther(e, s, cx, expect);
  }
}

function compileOther(e: Expr, s: Scope, cx: CompileCtx, expect?: SqlType): Typed {
  switch (e.k) {
    case 'is':
      return isExpr(e.e, e.what, e.not, s, cx);
    case 'in':
      return inExpr(e, s, cx);
    case 'between': {
      const [x, lo, hi] = [e.e, e.lo, e.hi].map((a) => compileExpr(a, s, cx)) as [Typed, Typed, Typed];
      const [a, b, c] = unify([x, lo, hi], cx, 'operator BETWEEN', startPos(e));
      return {
        sql: `(${orderKey(a)} ${e.not ? 'NOT ' : ''}BETWEEN ${orderKey(b)} AND ${orderKey(c)})`,
        type: T.BOOL,
        agg: any(a, b, c),
      };
    }
    case 'like': {
      const [x, p] = unify(
        [compileExpr(e.e, s, cx), compileExpr(e.pattern, s, cx)],
        cx,
        'operator LIKE',
        startPos(e),
      );
      if (x.type.code !== 'STRING' && x.type.code !== 'BYTES')
        noSignature(
          'operator LIKE',
          [x.type, p.type],
          'STRING LIKE STRING; BYTES LIKE BYTES',
          cx.dialect,
          cx.at(startPos(e)),
        );
      return {
        sql: `(${x.sql} ${e.not ? 'NOT ' : ''}LIKE ${p.sql} ESCAPE '\\')`,
        type: T.BOOL,
        agg: any(x, p),
      };
    }
    case 'case':
      return caseExpr(e, s, cx, expect);
    case 'exists':
      return { sql: `EXISTS (${compileQuery(e.query, cx, s).sql})`, type: T.BOOL };
    case 'subquery':
      return scalarSubquery(e.query, s, cx, e.pos);
    case 'arraySubquery':
      return arraySubquery(e.query, s, cx, e.pos);
    case 'arrayLit':
      return arrayLiteral(
        e.elems,
        e.elemType ?? (expect?.code === 'ARRAY' ? expect.arrayElementType : undefined),
        e.elemType !== undefined,
        s,
        cx,
        e.pos,
      );
    case 'struct':
      return structValue(e.fields, e.type ?? (expect?.code === 'STRUCT' ? expect : undefined), s, cx, e.pos);
    case 'index':
      return subscript(compileExpr(e.base, s, cx), compileExpr(e.index, s, cx, T.INT64), e.mode, cx, e.pos);
    case 'extract':
      return callFunction(
        {
          k: 'call',
          name: '$EXTRACT',
          args: [{ k: 'lit', kind: 'string', value: e.part, pos: e.pos }, e.e],
          distinct: false,
          star: false,
          pos: e.pos,
        },
        s,
        cx,
      );
    case 'default':
      return cx.fail('DEFAULT is only allowed in INSERT … VALUES', e.pos);
    default:
      return cx.fail(
        'INTERVAL is only allowed in TIMESTAMP_ADD, TIMESTAMP_SUB, DATE_ADD and DATE_SUB',
        e.pos,
      );
  }
}

function any(...xs: Typed[]): boolean {
  return xs.some((x) => x.agg);
}

function literal(kind: string, value: string, cx: CompileCtx, expect?: SqlType): Typed {
  switch (kind) {
    case 'null':
      return { sql: 'NULL', type: expect ?? T.INT64, flex: 'null' };
    case 'bool':
      return { sql: value === 'TRUE' ? '1' : '0', type: T.BOOL };
    case 'string':
      return { sql: ql(value), type: T.STRING, flex: 'string', text: value };
    case 'bytes':
      return { sql: sqlLiteral(Buffer.from(value, 'latin1')), type: T.BYTES };
    case 'int': {
      const v = BigInt(value);
      if (v > 9223372036854775807n || v < -9223372036854775808n)
        cx.fail(`Invalid integer literal: ${value}`, -1);
      return { sql: v.toString(), type: T.INT64, flex: 'int', text: value };
    }
    default:
      if (cx.pg)
        return {
          sql: ql(value),
          type: { code: 'NUMERIC', typeAnnotation: 'PG_NUMERIC' },
          flex: 'float',
          text: value,
        };
      return { sql: sqlLiteral(Number(value)), type: T.FLOAT64, flex: 'float', text: value };
  }
}

function typedLiteral(type: SqlType, value: string, cx: CompileCtx, pos: number): Typed {
  try {
    const v =
      type.code === 'TIMESTAMP' || type.code === 'DATE'
        ? castValue(value, T.STRING, type, false)
        : wireToStored(value, type);
    return { sql: sqlLiteral(v), type };
  } catch {
    const what = type.code === 'TIMESTAMP' ? 'timestamp' : type.code === 'DATE' ? 'date' : type.code;
    return cx.fail(`Invalid ${what} literal: '${value}'`, pos);
  }
}

function param(name: string, cx: CompileCtx, pos: number, expect?: SqlType): Typed {
  if (!cx.params.has(name))
    return cx.fail(
      cx.pg ? `No value found for parameter $${name.slice(1)}` : `Query parameter '${name}' not found`,
      pos,
    );
  cx.params.used.add(name);
  const t = cx.params.declaredType(name);
  if (t) return { sql: `@${name}`, type: t };
  if (expect) cx.params.fix(name, expect);
  return { sql: `@${name}`, type: cx.params.untypedType(name), flex: 'param', text: name };
}

/** Flattens `a.b.c` into its root identifier and field names (undefined when the root is not an identifier). */
function parts(e: Expr): string[] | undefined {
  if (e.k === 'ident') return [e.name];
  if (e.k === 'dot') {
    const base = parts(e.base);
    return base ? [...base, e.name] : undefined;
  }
  return undefined;
}

function path(e: Expr & { k: 'ident' | 'dot' }, s: Scope, cx: CompileCtx): Typed {
  const names = parts(e);
  if (!names) {
    const d = e as Expr & { k: 'dot' };
    return field(compileExpr(d.base, s, cx), d.name, cx, d.pos);
  }
  for (let level: Scope | undefined = s; level; level = level.parent) {
    const found = resolveAt(level, names, cx, e.pos);
    if (found) return found;
  }
  const first = names[0] as string;
  return cx.fail(cx.pg ? `column "${first}" does not exist` : `Unrecognized name: ${first}`, e.pos);
}

/** Resolves a path at one scope level: `range.column.field…`, `column.field…`, or a value-table range. */
function resolveAt(level: Scope, names: string[], cx: CompileCtx, pos: number): Typed | undefined {
  const [first, ...rest] = names as [string, ...string[]];
  const range = level.range(first);
  if (range && rest.length > 0 && !range.value) {
    const col = range.cols.find((c) => c.name.toLowerCase() === (rest[0] as string).toLowerCase());
    if (!col)
      return cx.fail(
        cx.pg ? `column ${first}.${rest[0]} does not exist` : `Name ${rest[0]} not found inside ${first}`,
        pos,
      );
    return fields({ sql: col.sql, type: col.type, name: col.name }, rest.slice(1), cx, pos);
  }
  const cols = level.columns(first);
  if (cols.length > 1)
    return cx.fail(
      cx.pg ? `column reference "${first}" is ambiguous` : `Column name ${first} is ambiguous`,
      pos,
    );
  const col = cols[0];
  if (col)
    return fields(
      { sql: col.sql, type: col.type, name: names.length === 1 ? first : col.name },
      rest,
      cx,
      pos,
    );
  if (range?.value) return fields({ ...range.value, name: range.value.name }, rest, cx, pos);
  if (range)
    return cx.fail(
      `Row values of range variables are not supported by the emulator: ${first}`,
      pos,
      Code.UNIMPLEMENTED,
    );
  return undefined;
}

function fields(x: Typed, names: string[], cx: CompileCtx, pos: number): Typed {
  return names.reduce((acc, n) => field(acc, n, cx, pos), x);
}

/** `x.name` on a STRUCT value. */
export function field(x: Typed, name: string, cx: CompileCtx, pos: number): Typed {
  if (x.type.code !== 'STRUCT') {
    if (x.type.code === 'JSON')
      throw new SpannerError(Code.UNIMPLEMENTED, 'The emulator does not support JSON field access');
    return cx.fail(`Cannot access field ${name} on a value with type ${typeName(x.type, cx.dialect)}`, pos);
  }
  const fs = x.type.structType?.fields ?? [];
  const matches = fs.flatMap((f, i) => (f.name.toLowerCase() === name.toLowerCase() ? [i] : []));
  if (matches.length === 0)
    return cx.fail(`Field name ${name} does not exist in ${typeName(x.type, cx.dialect)}`, pos);
  if (matches.length > 1) return cx.fail(`Struct field name ${name} is ambiguous`, pos);
  return fieldAt(x, matches[0] as number);
}

/** The `i`-th field of a STRUCT value. */
export function fieldAt(x: Typed, i: number): Typed {
  const f = (x.type.structType?.fields ?? [])[i] as { name: string; type: SqlType };
  return { sql: `sp_field(${x.sql}, ${i}, ${typeArg(f.type)})`, type: f.type, name: f.name, agg: x.agg };
}

function cast(inner: Expr, to: SqlType, safe: boolean, s: Scope, cx: CompileCtx, pos: number): Typed {
  const x = compileExpr(inner, s, cx, to);
  const name = cx.pg ? (x.name ?? (to.typeAnnotation === 'PG_OID' ? 'oid' : undefined)) : undefined;
  const direct = x.flex === 'null' || x.flex === 'param' ? convert(x, to, cx) : undefined;
  if (direct) return { ...direct, name };
  if (
    x.type.code === to.code &&
    (x.type.code !== 'ARRAY' || typeName(x.type, cx.dialect) === typeName(to, cx.dialect))
  )
    return { ...x, type: to, flex: undefined, name };
  if (!castable(x.type, to))
    cx.fail(`Invalid cast from ${typeName(x.type, cx.dialect)} to ${typeName(to, cx.dialect)}`, pos);
  return {
    sql: `sp_cast(${x.sql}, ${typeArg(x.type)}, ${typeArg(to)}, ${safe ? 1 : 0})`,
    type: to,
    agg: x.agg,
    name,
  };
}

const CASTS: Record<string, string[]> = {
  INT64: ['INT64', 'FLOAT64', 'FLOAT32', 'NUMERIC', 'STRING', 'BOOL'],
  FLOAT64: ['INT64', 'FLOAT64', 'FLOAT32', 'NUMERIC', 'STRING'],
  NUMERIC: ['INT64', 'FLOAT64', 'FLOAT32', 'NUMERIC', 'STRING'],
  BOOL: ['INT64', 'BOOL', 'STRING'],
  STRING: [
    'INT64',
    'FLOAT64',
    'FLOAT32',
    'NUMERIC',
    'BOOL',
    'STRING',
    'BYTES',
    'DATE',
    'TIMESTAMP',
    'JSON',
    'UUID',
  ],
  BYTES: ['BYTES', 'STRING'],
  DATE: ['DATE', 'STRING', 'TIMESTAMP'],
  TIMESTAMP: ['TIMESTAMP', 'STRING', 'DATE'],
  JSON: ['JSON', 'STRING'],
  UUID: ['UUID', 'STRING', 'BYTES'],
};

function castable(from: SqlType, to: SqlType): boolean {
  if (from.code === 'ARRAY' && to.code === 'ARRAY')
    return castable(from.arrayElementType as SqlType, to.arrayElementType as SqlType);
  const f = from.code === 'FLOAT32' ? 'FLOAT64' : from.code;
  return (CASTS[f] ?? []).includes(to.code);
}

function unary(op: string, x: Typed, cx: CompileCtx, pos: number): Typed {
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

function binary(op: string, le: Expr, re: Expr, s: Scope, cx: CompileCtx, pos: number): Typed {
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
  if (t.code === 'ARRAY' || t.code === 'JSON' || (t.code === 'STRUCT' && !eq)) {
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

function isExpr(inner: Expr, what: 'NULL' | 'TRUE' | 'FALSE', not: boolean, s: Scope, cx: CompileCtx): Typed {
  const x = compileExpr(inner, s, cx, what === 'NULL' ? undefined : T.BOOL);
  if (what === 'NULL') return { sql: `(${x.sql} IS ${not ? 'NOT ' : ''}NULL)`, type: T.BOOL, agg: x.agg };
  const b =
    convert(x, T.BOOL, cx) ??
    noSignature(`operator IS ${what}`, [x.type], `BOOL IS ${what}`, cx.dialect, cx.at(inner.pos));
  return { sql: `(${b.sql} IS ${not ? 'NOT ' : ''}${what === 'TRUE' ? 1 : 0})`, type: T.BOOL, agg: x.agg };
}

function inExpr(e: Expr & { k: 'in' }, s: Scope, cx: CompileCtx): Typed {
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

function caseExpr(e: Expr & { k: 'case' }, s: Scope, cx: CompileCtx, expect?: SqlType): Typed {
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

function scalarSubquery(q: Query, s: Scope, cx: CompileCtx, pos: number): Typed {
  const c = compileQuery(q, cx, s);
  if (c.cols.length !== 1)
    cx.fail(
      'Scalar subquery cannot have more than one column unless using SELECT AS STRUCT to build STRUCT values',
      pos,
    );
  return { sql: `(${c.sql})`, type: (c.cols[0] as { type: SqlType }).type };
}

function arraySubquery(q: Query, s: Scope, cx: CompileCtx, pos: number): Typed {
  const c = compileQuery(q, cx, s);
  if (c.cols.length !== 1)
    cx.fail(
      'ARRAY subquery cannot have more than one column unless using SELECT AS STRUCT to build STRUCT values',
      pos,
    );
  const el = (c.cols[0] as { type: SqlType }).type;
  if (el.code === 'ARRAY')
    cx.fail(
      'Cannot use array subquery with column of type ARRAY because nested arrays are not supported',
      pos,
    );
  return { sql: `(SELECT sp_array_agg(${typeArg(el)}, "c0") FROM (${c.sql}))`, type: arrayOf(el) };
}

function arrayLiteral(
  elems: Expr[],
  elType: SqlType | undefined,
  declared: boolean,
  s: Scope,
  cx: CompileCtx,
  pos: number,
): Typed {
  const xs = elems.map((e) => compileExpr(e, s, cx, elType));
  let el = elType;
  if (!declared) el = xs.length ? supertype(xs, cx.dialect) : (elType ?? T.INT64);
  if (!el)
    return cx.fail(
      'Array elements of types {' +
        xs.map((x) => typeName(x.type, cx.dialect)).join(', ') +
        '} do not have a common supertype',
      pos,
    );
  const t = el;
  if (t.code === 'ARRAY')
    cx.fail('Cannot construct array with element type ARRAY because nested arrays are not supported', pos);
  const conv = xs.map(
    (x) =>
      convert(x, t, cx) ??
      cx.fail(
        `Array element type ${typeName(x.type, cx.dialect)} does not coerce to ${typeName(t, cx.dialect)}`,
        pos,
      ),
  );
  if (conv.length === 0) return { sql: `'[]'`, type: arrayOf(t) };
  return {
    sql: `sp_array(${typeArg(t)}, ${conv.map((x) => x.sql).join(', ')})`,
    type: arrayOf(t),
    agg: any(...conv),
  };
}

function structValue(
  fs: Array<{ e: Expr; alias?: string }>,
  declared: SqlType | undefined,
  s: Scope,
  cx: CompileCtx,
  pos: number,
): Typed {
  const dfs = declared?.structType?.fields;
  if (dfs && dfs.length !== fs.length)
    cx.fail(`STRUCT type has ${dfs.length} fields but constructor call has ${fs.length} fields`, pos);
  const xs = fs.map((f, i) => compileExpr(f.e, s, cx, dfs?.[i]?.type));
  const fields = xs.map((x, i) => {
    const d = dfs?.[i];
    const t = d?.type ?? x.type;
    const c =
      convert(x, t, cx) ??
      cx.fail(
        `STRUCT field ${i + 1} has type ${typeName(x.type, cx.dialect)} which does not coerce to ${typeName(t, cx.dialect)}`,
        pos,
      );
    return { name: d?.name ?? fs[i]?.alias ?? (declared ? '' : (x.name ?? '')), type: t, sql: c.sql };
  });
  const type: SqlType = {
    code: 'STRUCT',
    structType: { fields: fields.map((f) => ({ name: f.name, type: f.type })) },
  };
  const args = fields.map((f) => `, ${f.sql}`).join('');
  return { sql: `sp_struct(${typeArg(type)}${args})`, type, agg: any(...xs) };
}

function subscript(arr: Typed, idx: Typed, mode: string, cx: CompileCtx, pos: number): Typed {
  if (arr.type.code !== 'ARRAY') {
    if (arr.type.code === 'JSON')
      throw new SpannerError(Code.UNIMPLEMENTED, 'The emulator does not support JSON subscripts');
    return cx.fail(
      `Element access using [] is not supported on values of type ${typeName(arr.type, cx.dialect)}`,
      pos,
    );
  }
  const i =
    convert(idx, T.INT64, cx) ??
    cx.fail(`Array index must be INT64, not ${typeName(idx.type, cx.dialect)}`, pos);
  const el = arr.type.arrayElementType as SqlType;
  const m = mode === 'BARE' ? 'OFFSET' : mode;
  return { sql: `sp_elem(${arr.sql}, ${i.sql}, ${typeArg(el)}, ${ql(m)})`, type: el, agg: any(arr, idx) };
}
