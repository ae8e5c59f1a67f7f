/**
 * Entry point of the SQL front end: a query's text, the catalog and the request's parameters in; SQLite SQL,
 * the output columns' names and types, the user tables read and the bound parameter values out.
 */
import type { SpannerTypeJson, WireValue } from '../hooks';
import type { Column, Schema, Table } from '../schema';
import { qi } from '../storage';
import type { Dialect, Token } from '../tokenizer';
import type { StoredValue } from '../values';
import { compileExpr } from './compile-expr';
import { compileQuery, condition } from './compile-query';
import { convert } from './convert';
import { Cursor } from './cursor';
import { parseExpr } from './parse-expr';
import { parseQuery } from './parse-query';
import { type Catalog, CompileCtx, Params, Scope } from './scope';
import { typeName } from './typing';

/** A compiled query, ready to run against a snapshot. */
export interface CompiledStatement {
  sql: string;
  /** Lower-cased names of the user tables read (each gets a snapshot CTE). */
  tables: Set<string>;
  startsWithWith: boolean;
  columns: Array<{ name: string; type: SpannerTypeJson }>;
  params: Record<string, StoredValue>;
}

/** Compiles a query of the dialect against the catalog, with the request's parameter values and types. */
export function compileStatement(
  sql: string,
  dialect: Dialect,
  catalog: Catalog,
  values: Record<string, WireValue> = {},
  types: Record<string, SpannerTypeJson | undefined> = {},
): CompiledStatement {
  const c = new Cursor(sql.trim().replace(/;\s*$/, ''), dialect);
  if (!c.isWord('SELECT') && !c.isWord('WITH') && !c.isOp('(')) c.fail('Expected a query (SELECT or WITH)');
  const q = parseQuery(c);
  if (!c.done()) c.fail('Expected end of input');
  const cx = new CompileCtx(c.src, dialect, catalog, new Params(values, types));
  const out = compileQuery(q, cx);
  return {
    sql: out.sql,
    tables: cx.tables,
    startsWithWith: out.sql.startsWith('WITH '),
    columns: out.cols.map((col) => ({ name: col.name, type: col.type })),
    params: cx.params.bind(),
  };
}

/**
 * An expression of a row of `table` parsed to its end, with the scope in which `columns` are referenced by
 * their quoted names and a context that compiles against the schema alone (no parameters).
 */
function rowExpression(expression: Token[], schema: Schema, table: Table, columns: Column[]) {
  const c = new Cursor('', schema.dialect, expression);
  const e = parseExpr(c);
  if (!c.done()) c.fail('Expected end of expression');
  const cx = new CompileCtx('', schema.dialect, { schema }, new Params({}, {}));
  const s = new Scope();
  s.ranges.push({
    name: table.name,
    cols: columns.map((col) => ({ name: col.name, type: col.ct.type, sql: qi(col.name) })),
  });
  return { e, s, cx };
}

/**
 * A boolean expression over one row of `table` (a CHECK constraint), as SQLite SQL whose column references
 * are the quoted column names: evaluate it over `SELECT ? AS "Col", …`.
 */
export function compileRowCondition(expression: Token[], schema: Schema, table: Table): string {
  const { e, s, cx } = rowExpression(expression, schema, table, table.columns);
  return condition(e, s, cx, 'CHECK constraint expression');
}

/**
 * A value expression over one row of `table` (a generated column of type `type`), as SQLite SQL in the
 * column's stored form; `columns` are the row's columns it may read, referenced by their quoted names.
 */
export function compileRowValue(
  expression: Token[],
  schema: Schema,
  table: Table,
  columns: Column[],
  type: SpannerTypeJson,
  what: string,
): string {
  const { e, s, cx } = rowExpression(expression, schema, table, columns);
  const x = compileExpr(e, s, cx, type);
  const v = convert(x, type, cx);
  if (!v)
    return cx.fail(
      `${what} has type ${typeName(x.type, cx.dialect)}, which cannot be assigned to ${typeName(type, cx.dialect)}`,
      e.pos,
    );
  if (cx.tables.size > 0) return cx.fail(`${what} may only reference columns of its own table`, e.pos);
  return v.sql;
}
