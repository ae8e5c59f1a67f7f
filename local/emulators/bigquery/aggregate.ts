/**
 * Aggregate queries: `GROUP BY` columns, `COUNT(*)`, `COUNT([DISTINCT] column)`, `ANY_VALUE(column)` and the
 * BOOL of two aggregates compared with `=`, over the query runner's scratch table. As BigQuery answers them
 * (https://cloud.google.com/bigquery/docs/reference/standard-sql/aggregate_functions): without GROUP BY one
 * row, even over no rows (COUNT 0, ANY_VALUE NULL); with it one row per group and none over no rows;
 * `ANY_VALUE` ignores NULLs and is NULL only when every value of the group is; `COUNT(column)` counts the
 * non-NULL values; a SELECT-list column that is neither grouped nor aggregated is refused. Grouped columns and
 * `ANY_VALUE` are projected from a stored row of the group, so every type round-trips exactly.
 */
import type Database from 'better-sqlite3';
import type { Field } from './schema';
import { type Aggregate, invalidQuery, type SelectItem, type SelectQuery } from './sql-parse';
import type { Row, Value } from './values';

/** What the runner hands over: the scratch table `t0` (row index `__i`) and the FROM clause with WHERE. */
export interface GroupedInput {
  db: Database.Database;
  source: { fields: Field[]; rows: Row[] };
  q: SelectQuery;
  from: string;
  binds: Array<bigint | number | string | Buffer | null>;
  /** The field of a column name, or the service's `Unrecognized name` error. */
  column(name: string): Field;
}

/** Whether a query aggregates (then {@link runGrouped} answers it). */
export function isAggregate(q: SelectQuery): boolean {
  return q.groupBy.length > 0 || q.items.some((i) => i.kind === 'aggregate');
}

/** The SQLite expression of one aggregate: a count, or (ANY_VALUE) the row index of a non-NULL value. */
function sqlOf(agg: Aggregate, input: GroupedInput): string {
  if (agg.fn === 'ANY_VALUE') {
    const c = `"${input.column(agg.column).name}"`;
    return `MIN(CASE WHEN ${c} IS NOT NULL THEN __i END)`;
  }
  if (agg.column === undefined) return 'COUNT(*)';
  return `COUNT(${agg.distinct ? 'DISTINCT ' : ''}"${input.column(agg.column).name}")`;
}

function aggregateValue(agg: Aggregate, found: unknown, input: GroupedInput): Value {
  if (agg.fn === 'COUNT') return (found as bigint | null) ?? 0n;
  if (found === null || found === undefined) return null;
  return input.source.rows[Number(found)]?.[input.column(agg.column).name] ?? null;
}

/** `=` of two aggregate values: NULL when either is NULL, as SQL compares. */
function equal(a: Value, b: Value): Value {
  if (a === null || b === null) return null;
  return String(a) === String(b);
}

function checkGrouped(q: SelectQuery, input: GroupedInput): void {
  const grouped = new Set(q.groupBy.map((g) => input.column(g).name));
  for (const item of q.items) {
    if (item.kind === 'star')
      throw invalidQuery('SELECT * expression references columns which are neither grouped nor aggregated');
    if (item.kind === 'column' && !grouped.has(input.column(item.name).name))
      throw invalidQuery(
        `SELECT list expression references column ${item.name} which is neither grouped nor aggregated at [1:1]`,
      );
  }
}

/** Result fields: grouped columns keep their field, COUNT is INT64, ANY_VALUE its column's, `=` BOOL. */
function fieldsOf(items: SelectItem[], input: GroupedInput): Field[] {
  let unnamed = 0;
  return items.map((item): Field => {
    if (item.kind === 'column') {
      const f = input.column(item.name);
      return { ...f, name: item.alias ?? f.name };
    }
    if (item.kind !== 'aggregate') throw invalidQuery('SELECT * in an aggregate query');
    const name = item.alias ?? `f${unnamed++}_`;
    if (item.equals) return { name, type: 'BOOL', mode: 'NULLABLE' };
    if (item.agg.fn === 'ANY_VALUE') return { ...input.column(item.agg.column), name };
    return { name, type: 'INT64', mode: 'NULLABLE' };
  });
}

/** ORDER BY of an aggregate query: a grouped column, or the alias of a COUNT item. */
function orderOf(q: SelectQuery, input: GroupedInput): string[] {
  return q.orderBy.map((o) => {
    const i = q.items.findIndex(
      (it) => it.kind !== 'star' && it.alias?.toLowerCase() === o.column.toLowerCase(),
    );
    const item = q.items[i];
    const dir = o.desc ? 'DESC' : 'ASC';
    if (item?.kind === 'aggregate' && item.agg.fn === 'COUNT' && !item.equals) return `a${i} ${dir}`;
    const name = item?.kind === 'column' ? item.name : o.column;
    if (!q.groupBy.some((g) => input.column(g).name === input.column(name).name))
      throw invalidQuery(`The emulator orders an aggregate query only by grouped columns or COUNT aliases`);
    return `"${input.column(name).name}" ${dir}`;
  });
}

/** Answers an aggregate query. */
export function runGrouped(input: GroupedInput): { fields: Field[]; rows: Row[] } {
  const { q } = input;
  checkGrouped(q, input);
  const fields = fieldsOf(q.items, input);
  const select = ['MIN(__i) AS __r'];
  for (const [i, item] of q.items.entries()) {
    if (item.kind !== 'aggregate') continue;
    select.push(`${sqlOf(item.agg, input)} AS a${i}`);
    if (item.equals) select.push(`${sqlOf(item.equals, input)} AS b${i}`);
  }
  const group = q.groupBy.length
    ? ` GROUP BY ${q.groupBy.map((g) => `"${input.column(g).name}"`).join(', ')}`
    : '';
  const order = orderOf(q, input);
  const tail = `${order.length ? ` ORDER BY ${order.join(', ')}` : ''}${q.limit !== undefined ? ` LIMIT ${q.limit}` : ''}${q.offset !== undefined ? ` OFFSET ${q.offset}` : ''}`;
  const found = input.db
    .prepare(`SELECT ${select.join(', ')} FROM ${input.from}${group}${tail}`)
    .safeIntegers(true)
    .all(...input.binds) as Array<Record<string, unknown>>;
  const rows = found.map((r) => {
    const row: Row = {};
    for (const [i, item] of q.items.entries()) {
      const name = fields[i]!.name;
      if (item.kind === 'column') {
        const stored = r.__r === null ? undefined : input.source.rows[Number(r.__r)];
        row[name] = stored?.[input.column(item.name).name] ?? null;
      } else if (item.kind === 'aggregate') {
        const a = aggregateValue(item.agg, r[`a${i}`], input);
        row[name] = item.equals ? equal(a, aggregateValue(item.equals, r[`b${i}`], input)) : a;
      }
    }
    return row;
  });
  return { fields, rows };
}
