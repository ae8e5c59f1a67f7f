/**
 * DML → a typed plan: the SQLite query that finds (UPDATE, DELETE) or produces (INSERT) the rows, with every
 * value converted to its column's type at compile time (a value that does not fit is the service's error),
 * and the THEN RETURN / RETURNING list compiled over the written row.
 */
import type { SpannerTypeJson, WireValue } from '../hooks';
import type { Column, Table } from '../schema';
import { qi } from '../storage';
import type { Dialect } from '../tokenizer';
import type { StoredValue } from '../values';
import type { Dml, Expr, SelectItem } from './ast';
import { compileExpr } from './compile-expr';
import { type Compiled, compileItems, compileQuery, condition } from './compile-query';
import { convert } from './convert';
import { type InsertMode, parseDml } from './parse-dml';
import { type Catalog, CompileCtx, Params, Scope } from './scope';
import { type Typed, typeName } from './typing';

/** A compiled DML statement. */
export interface DmlPlan {
  kind: 'insert' | 'update' | 'delete';
  mode: InsertMode;
  table: Table;
  /** insert: the listed columns; update: the SET columns; delete: every column. */
  columns: Column[];
  /** SQL of the rows: insert → values of `columns`; update → key values then SET values; delete → all columns. */
  sql: string;
  tables: Set<string>;
  startsWithWith: boolean;
  params: Record<string, StoredValue>;
  /** THEN RETURN / RETURNING: SQL over `@__c<i>` (the row's i-th column) and the output columns. */
  returning?: { sql: string; tables: Set<string>; columns: Array<{ name: string; type: SpannerTypeJson }> };
}

function tableOf(name: string, cx: CompileCtx, pos: number): Table {
  const t = cx.catalog.schema.find(name);
  return t ?? cx.fail(cx.pg ? `relation "${name}" does not exist` : `Table not found: ${name}`, pos);
}

function columnOf(table: Table, name: string, cx: CompileCtx, pos: number): Column {
  const c = table.columns.find((x) => x.name.toLowerCase() === name.toLowerCase());
  return (
    c ??
    cx.fail(
      cx.pg
        ? `column "${name}" of relation "${table.name}" does not exist`
        : `Column ${name} is not present in table ${table.name}`,
      pos,
    )
  );
}

function assign(x: Typed, col: Column, cx: CompileCtx, pos: number, verb: 'insert' | 'update'): string {
  const c = convert(x, col.ct.type, cx);
  if (c) return c.sql;
  const [have, want] = [typeName(x.type, cx.dialect), typeName(col.ct.type, cx.dialect)];
  if (cx.pg) return cx.fail(`column "${col.name}" is of type ${want} but expression is of type ${have}`, pos);
  if (verb === 'insert')
    return cx.fail(
      `Value has type ${have} which cannot be inserted into column ${col.name}, which has type ${want}`,
      pos,
    );
  return cx.fail(`Value of type ${have} cannot be assigned to ${col.name}, which has type ${want}`, pos);
}

function targetScope(table: Table, alias: string | undefined, cx: CompileCtx): [Scope, string] {
  const s = new Scope();
  const r = cx.fresh('t');
  cx.tables.add(table.name.toLowerCase());
  s.ranges.push({
    name: alias ?? table.name,
    cols: table.columns.map((c) => ({ name: c.name, type: c.ct.type, sql: `${r}.${qi(c.name)}` })),
  });
  return [s, `${qi(table.name)} AS ${r}`];
}

function insertRows(d: Dml & { k: 'insert' }, cols: Column[], cx: CompileCtx): string {
  if (d.query) {
    const q: Compiled = compileQuery(d.query, cx);
    if (q.cols.length !== cols.length)
      cx.fail(`Inserted row has wrong column count; Has ${q.cols.length}, expected ${cols.length}`, d.pos);
    const list = q.cols.map(
      (c, i) =>
        `${assign({ sql: `"c${i}"`, type: c.type, flex: c.flex === 'null' ? 'null' : undefined }, cols[i] as Column, cx, d.pos, 'insert')} AS "c${i}"`,
    );
    return `SELECT ${list.join(', ')} FROM (${q.sql})`;
  }
  const rows = (d.values ?? []).map((row) => {
    if (row.length !== cols.length)
      cx.fail(`Inserted row has wrong column count; Has ${row.length}, expected ${cols.length}`, d.pos);
    const vals = row.map((e: Expr, i) => {
      const col = cols[i] as Column;
      if (e.k === 'default') return 'NULL';
      return assign(compileExpr(e, new Scope(), cx, col.ct.type), col, cx, e.pos, 'insert');
    });
    return `(${vals.join(', ')})`;
  });
  return `SELECT * FROM (VALUES ${rows.join(', ')})`;
}

function returning(
  items: SelectItem[] | undefined,
  table: Table,
  alias: string | undefined,
  cx: CompileCtx,
): DmlPlan['returning'] {
  if (!items) return undefined;
  const s = new Scope();
  s.ranges.push({
    name: alias ?? table.name,
    cols: table.columns.map((c, i) => ({ name: c.name, type: c.ct.type, sql: `@__c${i}` })),
  });
  const before = new Set(cx.tables);
  const c = compileItems(items, s, cx);
  const tables = new Set([...cx.tables].filter((t) => !before.has(t)));
  return { sql: c.sql, tables, columns: c.cols.map((x) => ({ name: x.name, type: x.type })) };
}

function plan(
  d: Dml & { mode?: InsertMode },
  cx: CompileCtx,
): Omit<DmlPlan, 'tables' | 'startsWithWith' | 'params'> {
  const table = tableOf(d.table, cx, d.pos);
  if (d.k === 'insert') {
    const cols = d.columns.map((n) => columnOf(table, n, cx, d.pos));
    const dup = cols.find((c, i) => cols.indexOf(c) !== i);
    if (dup) cx.fail(`INSERT has columns with duplicate name: ${dup.name}`, d.pos);
    const sql = insertRows(d, cols, cx);
    return {
      kind: 'insert',
      mode: d.mode ?? 'insert',
      table,
      columns: cols,
      sql,
      returning: returning(d.returning, table, undefined, cx),
    };
  }
  if (!d.where && !cx.pg)
    cx.fail(`A WHERE clause is required in a ${d.k === 'update' ? 'UPDATE' : 'DELETE'} statement`, d.pos);
  const [s, from] = targetScope(table, d.alias, cx);
  const ref = (name: string) => s.ranges[0]?.cols.find((x) => x.name === name)?.sql ?? qi(name);
  const where = d.where ? ` WHERE ${condition(d.where, s, cx, 'WHERE clause')}` : '';
  const ret = returning(d.returning, table, d.alias, cx);
  if (d.k === 'delete') {
    const list = table.columns.map((c) => ref(c.name));
    return {
      kind: 'delete',
      mode: 'insert',
      table,
      columns: table.columns,
      sql: `SELECT ${list.join(', ')} FROM ${from}${where}`,
      returning: ret,
    };
  }
  const keys = table.primaryKey.map((k) => ref(k.name));
  const sets = d.set.map((a) => {
    const col = columnOf(table, a.column, cx, a.pos);
    if (table.primaryKey.some((k) => k.name === col.name))
      cx.fail(`Cannot UPDATE value on non-writable column: ${col.name}`, a.pos);
    return { col, sql: assign(compileExpr(a.e, s, cx, col.ct.type), col, cx, a.pos, 'update') };
  });
  const sql = `SELECT ${[...keys, ...sets.map((x) => x.sql)].join(', ')} FROM ${from}${where}`;
  return { kind: 'update', mode: 'insert', table, columns: sets.map((x) => x.col), sql, returning: ret };
}

/** Parses and compiles a DML statement. */
export function compileDml(
  sql: string,
  dialect: Dialect,
  catalog: Catalog,
  values: Record<string, WireValue> = {},
  types: Record<string, SpannerTypeJson | undefined> = {},
): DmlPlan {
  const d = parseDml(sql, dialect);
  const cx = new CompileCtx(sql.trim().replace(/;\s*$/, ''), dialect, catalog, new Params(values, types));
  const p = plan(d, cx);
  return { ...p, tables: cx.tables, startsWithWith: p.sql.startsWith('WITH '), params: cx.params.bind() };
}
