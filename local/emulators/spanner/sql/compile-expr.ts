/**
 * Expressions → SQLite with their types decided statically: column references, parameters (typed, or
 * taking their context's type), literals and casts here; operators in compile-ops.ts, STRUCT and ARRAY
 * values in compile-composite.ts. The SQL of a typed expression yields the stored form of its type.
 */
import { Code } from '../hooks';
import { ql } from '../storage';
import { wireToStored } from '../values';
import type { Expr } from './ast';
import { castValue } from './cast';
import {
  arrayLiteral,
  arraySubquery,
  field,
  scalarSubquery,
  structValue,
  subscript,
} from './compile-composite';
import { binary, caseExpr, inExpr, isExpr, orderKey, unary, unify } from './compile-ops';
import { compileQuery } from './compile-query';
import { convert, sqlLiteral, typeArg } from './convert';
import { callFunction } from './functions';
import type { CompileCtx, Scope } from './scope';
import { noSignature, type SqlType, T, type Typed, typeName } from './typing';

export { field, fieldAt } from './compile-composite';
export { orderKey, unify } from './compile-ops';

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

export function any(...xs: Typed[]): boolean {
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
  // A STRING parameter also converts to UUID where one is needed, as the service coerces it.
  if (t?.code === 'STRING') return { sql: `@${name}`, type: t, flex: 'stringParam', text: name };
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
