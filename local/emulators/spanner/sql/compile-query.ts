/**
 * Queries → SQLite: WITH entries, SELECT lists (stars with EXCEPT / REPLACE, AS STRUCT / AS VALUE), FROM
 * items (tables, INFORMATION_SCHEMA views, subqueries, UNNEST with OFFSET, joins with ON / USING), grouping,
 * set operations with supertyped columns, ORDER BY in each type's order, LIMIT / OFFSET. Output columns are
 * named `c0…cN` in SQL; their real names and types travel beside.
 */
import { Code, SpannerError } from '../hooks';
import type { Expr, From, OrderItem, Query, Select, SelectItem, SetBody } from './ast';
import { compileExpr, fieldAt, orderKey } from './compile-expr';
import { compileTable } from './compile-table';
import { convert, typeArg } from './convert';
import { type Col, type CompileCtx, type Range, Scope } from './scope';
import { type SqlType, supertype, T, type Typed, typeName } from './typing';

/** A compiled query: SQL with output columns `c0…`, and their names and types. */
export interface Compiled {
  sql: string;
  cols: Array<{ name: string; type: SqlType; flex?: Typed['flex'] }>;
  /** SELECT AS STRUCT / AS VALUE: one column that is the row. */
  valueTable?: boolean;
}

/** Compiles a query; `outer` is the enclosing query's scope (for correlated subqueries). */
export function compileQuery(q: Query, cx: CompileCtx, outer?: Scope): Compiled {
  const scope = new Scope(outer);
  const withs: string[] = [];
  for (const c of q.with) {
    const body = compileQuery(c.query, cx, scope);
    const name = cx.fresh('w');
    scope.ctes.set(c.name.toLowerCase(), { sql: name, cols: body.cols });
    withs.push(`${name} AS (${body.sql})`);
  }
  const tail = limit(q, scope, cx);
  let out: Compiled;
  if (q.body.k === 'select') out = compileSelect(q.body, cx, scope, q.orderBy, tail);
  else {
    const inner = body(q.body, cx, scope);
    out = q.orderBy.length || tail ? orderOutput(inner, q.orderBy, tail, cx, scope) : inner;
  }
  return withs.length ? { ...out, sql: `WITH ${withs.join(', ')} ${out.sql}` } : out;
}

function body(b: SetBody, cx: CompileCtx, scope: Scope): Compiled {
  if (b.k === 'select') return compileSelect(b, cx, scope, [], '');
  if (b.k === 'query') return compileQuery(b, cx, scope);
  return setOp(b, cx, scope);
}

function limit(q: Query, s: Scope, cx: CompileCtx): string {
  const n = (e: Expr | undefined, what: string) => {
    if (!e) return undefined;
    const x = convert(compileExpr(e, s, cx, T.INT64), T.INT64, cx);
    if (!x) return cx.fail(`${what} expects an integer literal or parameter`, e.pos);
    return x.sql;
  };
  const lim = n(q.limit, 'LIMIT');
  const off = n(q.offset, 'OFFSET');
  if (lim === undefined && off === undefined) return '';
  return ` LIMIT ${lim ?? -1}${off === undefined ? '' : ` OFFSET ${off}`}`;
}

/** A condition that must be BOOL (WHERE, HAVING, ON). */
export function condition(e: Expr, s: Scope, cx: CompileCtx, what: string): string {
  const x = compileExpr(e, s, cx, T.BOOL);
  const b = convert(x, T.BOOL, cx);
  if (!b)
    return cx.fail(`${what} should return type BOOL, but returns ${typeName(x.type, cx.dialect)}`, e.pos);
  return b.sql;
}

interface Item {
  x: Typed;
  name: string;
}

function anonymous(cx: CompileCtx): string {
  return cx.pg ? '?column?' : '';
}

function compileSelect(
  sel: Select,
  cx: CompileCtx,
  outer: Scope,
  orderBy: OrderItem[],
  tail: string,
): Compiled {
  const s = new Scope(outer);
  const from = sel.from ? ` FROM ${compileFrom(sel.from, s, cx)}` : '';
  const where = sel.where ? ` WHERE ${condition(sel.where, s, cx, 'WHERE clause')}` : '';
  let items = sel.items.flatMap((i) => selectItem(i, s, cx, Boolean(sel.from)));
  const group = sel.groupBy.length
    ? ` GROUP BY ${sel.groupBy.map((g) => groupKey(g, items, s, cx)).join(', ')}`
    : '';
  const having = sel.having ? ` HAVING ${condition(sel.having, s, cx, 'HAVING clause')}` : '';
  const order = orderBy.length ? orderClause(orderBy, items, s, cx) : '';
  if (sel.as === 'STRUCT') items = [structRow(items)];
  if (sel.as === 'VALUE' && items.length !== 1)
    cx.fail('SELECT AS VALUE query must have exactly one column', sel.pos);
  if (sel.distinct)
    for (const i of items)
      if (['ARRAY', 'JSON'].includes(i.x.type.code))
        cx.fail(
          `Column ${i.name} of type ${typeName(i.x.type, cx.dialect)} cannot be used in SELECT DISTINCT`,
          sel.pos,
        );
  const list = items.map((i, n) => `${i.x.sql} AS "c${n}"`).join(', ');
  return {
    sql: `SELECT ${sel.distinct ? 'DISTINCT ' : ''}${list}${from}${where}${group}${having}${order}${tail}`,
    cols: items.map((i) => ({ name: i.name, type: i.x.type, flex: i.x.flex })),
    valueTable: sel.as !== undefined,
  };
}

/** A FROM-less SELECT of `items` over the ranges of `s` (THEN RETURN / RETURNING lists). */
export function compileItems(items: SelectItem[], s: Scope, cx: CompileCtx): Compiled {
  const its = items.flatMap((i) => selectItem(i, s, cx, true));
  return {
    sql: `SELECT ${its.map((i, n) => `${i.x.sql} AS "c${n}"`).join(', ')}`,
    cols: its.map((i) => ({ name: i.name, type: i.x.type })),
  };
}

function structRow(items: Item[]): Item {
  const type: SqlType = {
    code: 'STRUCT',
    structType: { fields: items.map((i) => ({ name: i.name, type: i.x.type })) },
  };
  const args = items.map((i) => `, ${i.x.sql}`).join('');
  return {
    x: { sql: `sp_struct(${typeArg(type)}${args})`, type, agg: items.some((i) => i.x.agg) },
    name: '',
  };
}

function starColumns(r: Range): Col[] {
  return r.star ?? r.cols.filter((c) => !c.hidden);
}

function selectItem(item: SelectItem, s: Scope, cx: CompileCtx, hasFrom: boolean): Item[] {
  if (item.k === 'item') {
    const x = compileExpr(item.e, s, cx);
    return [{ x, name: item.alias ?? x.name ?? anonymous(cx) }];
  }
  let cols: Item[];
  if (item.qualifier) {
    const q = item.qualifier;
    const range = q.k === 'ident' ? s.range(q.name) : undefined;
    if (range && !range.value)
      cols = starColumns(range).map((c) => ({ x: { sql: c.sql, type: c.type }, name: c.name }));
    else {
      const x = compileExpr(q, s, cx);
      if (x.type.code !== 'STRUCT')
        cx.fail(`Dot-star is not supported for type ${typeName(x.type, cx.dialect)}`, item.pos);
      cols = (x.type.structType?.fields ?? []).map((f, i) => ({ x: fieldAt(x, i), name: f.name }));
    }
  } else {
    if (!hasFrom) cx.fail('SELECT * must have a FROM clause', item.pos);
    cols = s.ranges.flatMap(starColumns).map((c) => ({ x: { sql: c.sql, type: c.type }, name: c.name }));
  }
  const except = new Set(item.except.map((e) => e.toLowerCase()));
  for (const e of item.except)
    if (!cols.some((c) => c.name.toLowerCase() === e.toLowerCase()))
      cx.fail(`Column ${e} in SELECT * EXCEPT list does not exist`, item.pos);
  cols = cols.filter((c) => !except.has(c.name.toLowerCase()));
  for (const r of item.replace) {
    const at = cols.findIndex((c) => c.name.toLowerCase() === r.alias.toLowerCase());
    if (at < 0) cx.fail(`Column ${r.alias} in SELECT * REPLACE list does not exist`, item.pos);
    cols[at] = { x: compileExpr(r.e, s, cx), name: (cols[at] as Item).name };
  }
  return cols;
}

/** An output column named `name` (explicit alias or implicit name), or its ordinal. */
function outputRef(e: Expr, items: Item[], cx: CompileCtx): number | undefined {
  if (e.k === 'lit' && e.kind === 'int') {
    const n = Number(e.value);
    if (n < 1 || n > items.length) cx.fail(`ORDER BY / GROUP BY column number ${n} is out of range`, e.pos);
    return n - 1;
  }
  if (e.k !== 'ident') return undefined;
  const at = items.findIndex((i) => i.name.toLowerCase() === e.name.toLowerCase() && i.x.sql !== undefined);
  return at >= 0 && items.filter((i) => i.name.toLowerCase() === e.name.toLowerCase()).length === 1
    ? at
    : undefined;
}

function groupKey(g: Expr, items: Item[], s: Scope, cx: CompileCtx): string {
  const ref = outputRef(g, items, cx);
  if (ref !== undefined && (g.k === 'lit' || !s.columns((g as Expr & { k: 'ident' }).name).length))
    return `"c${ref}"`;
  const x = compileExpr(g, s, cx);
  if (['ARRAY', 'JSON', 'STRUCT'].includes(x.type.code))
    cx.fail(`Grouping by expressions of type ${typeName(x.type, cx.dialect)} is not allowed`, g.pos);
  return x.sql;
}

function orderClause(orderBy: OrderItem[], items: Item[], s: Scope, cx: CompileCtx): string {
  const keys = orderBy.flatMap((o) => {
    const ref = outputRef(o.e, items, cx);
    const x = ref !== undefined ? { ...(items[ref] as Item).x, sql: `"c${ref}"` } : compileExpr(o.e, s, cx);
    return sortKeys(x, o, cx);
  });
  return ` ORDER BY ${keys.join(', ')}`;
}

/** ORDER BY keys of one item: NUMERIC by value, GoogleSQL floats with NaN first, PostgreSQL NULLs last. */
function sortKeys(x: Typed, o: OrderItem, cx: CompileCtx): string[] {
  if (['ARRAY', 'STRUCT', 'JSON'].includes(x.type.code))
    throw new SpannerError(
      Code.INVALID_ARGUMENT,
      `ORDER BY does not support expressions of type ${typeName(x.type, cx.dialect)}`,
    );
  const dir = o.desc ? ' DESC' : '';
  const nulls = o.nulls ? ` NULLS ${o.nulls}` : cx.pg ? (o.desc ? ' NULLS FIRST' : ' NULLS LAST') : '';
  if (!cx.pg && (x.type.code === 'FLOAT64' || x.type.code === 'FLOAT32'))
    return [
      `(CASE WHEN ${x.sql} = 'NaN' THEN 0 WHEN ${x.sql} IS NOT NULL THEN 1 END)${dir}${nulls}`,
      `${x.sql}${dir}`,
    ];
  return [`${orderKey(x)}${dir}${nulls}`];
}

function orderOutput(
  inner: Compiled,
  orderBy: OrderItem[],
  tail: string,
  cx: CompileCtx,
  outer: Scope,
): Compiled {
  const s = new Scope(outer);
  const cols = inner.cols.map((c, i) => ({ name: c.name, type: c.type, sql: `"c${i}"` }));
  s.ranges.push({ cols });
  const items = cols.map((c) => ({ x: { sql: c.sql, type: c.type }, name: c.name }));
  const order = orderBy.length ? orderClause(orderBy, items, s, cx) : '';
  return { ...inner, sql: `SELECT * FROM (${inner.sql})${order}${tail}` };
}

function setOp(b: SetBody & { k: 'setop' }, cx: CompileCtx, scope: Scope): Compiled {
  const [l, r] = [body(b.l, cx, scope), body(b.r, cx, scope)];
  const opName = `${b.op} ${b.all ? 'ALL' : 'DISTINCT'}`;
  if (l.cols.length !== r.cols.length)
    cx.fail(
      `Queries in ${opName} have mismatched column count; query 1 has ${l.cols.length} columns, query 2 has ${r.cols.length} columns`,
      b.pos,
    );
  if (b.all && b.op !== 'UNION')
    throw new SpannerError(Code.UNIMPLEMENTED, `The emulator does not support ${opName}`);
  const types = l.cols.map((c, i) => {
    const d = r.cols[i] as Compiled['cols'][number];
    const t = supertype(
      [
        { sql: '', type: c.type, flex: c.flex },
        { sql: '', type: d.type, flex: d.flex },
      ],
      cx.dialect,
    );
    if (!t)
      cx.fail(
        `Column ${i + 1} in ${opName} has incompatible types: ${typeName(c.type, cx.dialect)}, ${typeName(d.type, cx.dialect)}`,
        b.pos,
      );
    return t;
  });
  const side = (c: Compiled) => {
    const list = c.cols.map(
      (col, i) =>
        `${(convert({ sql: `"c${i}"`, type: col.type, flex: col.flex === 'null' ? 'null' : undefined }, types[i] as SqlType, cx) as Typed).sql} AS "c${i}"`,
    );
    return `SELECT ${list.join(', ')} FROM (${c.sql})`;
  };
  const sqlOp = b.op === 'UNION' ? (b.all ? 'UNION ALL' : 'UNION') : b.op;
  return {
    sql: `${side(l)} ${sqlOp} ${side(r)}`,
    cols: l.cols.map((c, i) => ({ name: c.name, type: types[i] as SqlType })),
  };
}

/** Compiles a FROM item, adding its range variables to `s`; returns its SQL. */
export function compileFrom(f: From, s: Scope, cx: CompileCtx): string {
  switch (f.k) {
    case 'table':
      return compileTable(f, s, cx);
    case 'sub': {
      const c = compileQuery(f.query, cx, s.parent);
      const alias = cx.fresh('r');
      const cols = c.cols.map((col, i) => ({ name: col.name, type: col.type, sql: `${alias}."c${i}"` }));
      const value = c.valueTable ? { ...(cols[0] as Col), name: f.alias ?? '' } : undefined;
      const range: Range = { name: f.alias, cols, value };
      if (value?.type.code === 'STRUCT') range.star = structFields(value);
      s.ranges.push(range);
      return `(${c.sql}) AS ${alias}`;
    }
    case 'unnest':
      return unnest(f, s, cx);
    default:
      return join(f, s, cx);
  }
}

function structFields(value: Col): Col[] {
  return (value.type.structType?.fields ?? []).map((fd, i) => {
    const x = fieldAt({ sql: value.sql, type: value.type }, i);
    return { name: fd.name, type: x.type, sql: x.sql };
  });
}

function unnest(f: From & { k: 'unnest' }, s: Scope, cx: CompileCtx): string {
  const arr = compileExpr(f.e, s, cx);
  if (arr.type.code !== 'ARRAY')
    cx.fail(
      `Values referenced in UNNEST must be arrays. UNNEST contains expression of type ${typeName(arr.type, cx.dialect)}`,
      f.pos,
    );
  const el = arr.type.arrayElementType as SqlType;
  const alias = cx.fresh('u');
  const name = f.alias ?? (f.e.k === 'ident' || f.e.k === 'dot' ? arr.name : undefined);
  const value: Col = { name: name ?? '', type: el, sql: `sp_from_json_each(${alias}.value, ${typeArg(el)})` };
  const fields = el.code === 'STRUCT' ? structFields({ ...value, sql: `${alias}.value` }) : [];
  const offset: Col[] = f.offset ? [{ name: f.offset, type: T.INT64, sql: `${alias}.key` }] : [];
  const cols = [...(name ? [value] : []), ...fields, ...offset];
  s.ranges.push({ name, cols, value, star: [...(el.code === 'STRUCT' ? fields : [value]), ...offset] });
  return `json_each(${arr.sql}) AS ${alias}`;
}

function join(f: From & { k: 'join' }, s: Scope, cx: CompileCtx): string {
  const before = s.ranges.length;
  const l = compileFrom(f.l, s, cx);
  const mid = s.ranges.length;
  const r = compileFrom(f.r, s, cx);
  if (f.kind === 'CROSS') return `${l} CROSS JOIN ${r}`;
  let on: string;
  if (f.using) on = using(f, s.ranges.slice(before, mid), s.ranges.slice(mid), s, cx);
  else on = condition(f.on as Expr, s, cx, 'JOIN ON clause');
  return `${l} ${f.kind === 'INNER' ? '' : `${f.kind} `}JOIN ${r} ON ${on}`;
}

function using(f: From & { k: 'join' }, left: Range[], right: Range[], s: Scope, cx: CompileCtx): string {
  const find = (ranges: Range[], n: string) =>
    ranges.flatMap((r) => r.cols).find((c) => !c.hidden && c.name.toLowerCase() === n.toLowerCase());
  const conds = (f.using as string[]).map((n) => {
    const a = find(left, n);
    const b = find(right, n);
    if (!a || !b)
      return cx.fail(`Column ${n} in USING clause not found on ${a ? 'right' : 'left'} side of join`, f.pos);
    if (f.kind === 'RIGHT') a.hidden = true;
    else b.hidden = true;
    if (f.kind === 'FULL') {
      a.hidden = true;
      s.ranges.push({ cols: [{ name: a.name, type: a.type, sql: `coalesce(${a.sql}, ${b.sql})` }] });
    }
    return `${orderKey({ sql: a.sql, type: a.type })} = ${orderKey({ sql: b.sql, type: b.type })}`;
  });
  return conds.join(' AND ');
}
