/**
 * STRUCT and ARRAY values: field access, array and struct constructors, subscripts, and scalar and ARRAY
 * subqueries. Composite values are JSON texts of canonical wire values in SQLite.
 */
import { Code, SpannerError } from '../hooks';
import { ql } from '../storage';
import type { Expr, Query } from './ast';
import { any, compileExpr } from './compile-expr';
import { compileQuery } from './compile-query';
import { convert, typeArg } from './convert';
import type { CompileCtx, Scope } from './scope';
import { arrayOf, type SqlType, supertype, T, type Typed, typeName } from './typing';

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

/** A subquery that must give one column (unless SELECT AS STRUCT): its SQL and that column's type. */
function oneColumn(q: Query, s: Scope, cx: CompileCtx, pos: number, kind: 'Scalar' | 'ARRAY') {
  const c = compileQuery(q, cx, s);
  if (c.cols.length !== 1)
    cx.fail(
      `${kind} subquery cannot have more than one column unless using SELECT AS STRUCT to build STRUCT values`,
      pos,
    );
  return { sql: c.sql, type: (c.cols[0] as { type: SqlType }).type };
}

export function scalarSubquery(q: Query, s: Scope, cx: CompileCtx, pos: number): Typed {
  const c = oneColumn(q, s, cx, pos, 'Scalar');
  return { sql: `(${c.sql})`, type: c.type };
}

export function arraySubquery(q: Query, s: Scope, cx: CompileCtx, pos: number): Typed {
  const c = oneColumn(q, s, cx, pos, 'ARRAY');
  const el = c.type;
  if (el.code === 'ARRAY')
    cx.fail(
      'Cannot use array subquery with column of type ARRAY because nested arrays are not supported',
      pos,
    );
  return { sql: `(SELECT sp_array_agg(${typeArg(el)}, "c0") FROM (${c.sql}))`, type: arrayOf(el) };
}

export function arrayLiteral(
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

export function structValue(
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

export function subscript(arr: Typed, idx: Typed, mode: string, cx: CompileCtx, pos: number): Typed {
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
