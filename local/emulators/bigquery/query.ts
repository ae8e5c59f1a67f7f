/**
 * Runs the SELECT subset over an embedded SQLite engine: the table's applied rows (or, for a view, the rows
 * of the view's own query) are loaded into a scratch table, WHERE / ORDER BY / LIMIT are translated
 * (literals and parameters bound, never spliced), and result rows are projected from the stored rows so
 * every type round-trips exactly.
 */
import Database from 'better-sqlite3';
import { parseTimestamp } from '../../../shared/domain/timestamp';
import { isAggregate, runGrouped } from './aggregate';
import type { Catalog, Table } from './catalog';
import { CHANGE_SEQUENCE_NUMBER, CHANGE_TYPE } from './decode';
import { type Field, findField } from './schema';
import { invalidQuery, parseSelect, type SelectQuery, type Token } from './sql-parse';
import type { Row, Value } from './values';

/** A query parameter as jobs.query sends it. */
export interface QueryParameter {
  name?: string;
  parameterType?: { type?: string };
  parameterValue?: { value?: string };
}

/** A finished query: result schema and rows (stored values). */
export interface QueryResult {
  fields: Field[];
  rows: Row[];
}

type SqlValue = bigint | number | string | Buffer | null;

function toSql(v: Value): SqlValue {
  if (
    v === null ||
    typeof v === 'bigint' ||
    typeof v === 'number' ||
    typeof v === 'string' ||
    Buffer.isBuffer(v)
  )
    return v;
  if (typeof v === 'boolean') return v ? 1n : 0n;
  return JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x));
}

/** What a query reads: a table's applied rows or a view's result. */
interface Source {
  fields: Field[];
  rows: Row[];
}

/** Views may query views; deeper than this is a cycle or a mistake. */
const MAX_VIEW_DEPTH = 16;

const COMPARISON = new Set(['=', '!=', '<>', '<', '<=', '>', '>=', '(', ')', ',', '-']);
const KEYWORDS = new Set(['AND', 'OR', 'NOT', 'IS', 'NULL', 'IN', 'LIKE', 'BETWEEN']);

function column(table: Source, name: string): Field {
  if (name === CHANGE_TYPE || name === CHANGE_SEQUENCE_NUMBER || !findField(table.fields, name)) {
    throw invalidQuery(`Unrecognized name: ${name} at [1:1]`);
  }
  return findField(table.fields, name)!;
}

/** ORDER BY may name a SELECT-list alias, as BigQuery allows: the column it stands for. */
function aliased(items: ReturnType<typeof parseSelect>['items'], name: string): string {
  const item = items.find((i) => i.kind === 'column' && i.alias?.toLowerCase() === name.toLowerCase());
  return item?.kind === 'column' ? item.name : name;
}

function paramValue(p: QueryParameter | undefined, name: string): SqlValue {
  if (!p) throw invalidQuery(`Query parameter '${name}' not found`);
  const raw = p.parameterValue?.value;
  if (raw === undefined || raw === null) return null;
  switch ((p.parameterType?.type ?? 'STRING').toUpperCase()) {
    case 'INT64':
      return BigInt(raw);
    case 'FLOAT64':
      return Number(raw);
    case 'BOOL':
      return raw.toLowerCase() === 'true' ? 1n : 0n;
    case 'TIMESTAMP':
      return parseTimestamp(raw.replace(' ', 'T').replace(/\+00(:00)?$/, 'Z')) / 1000n;
    default:
      return raw;
  }
}

/** Translates WHERE tokens to SQLite with bound values. */
function translateWhere(table: Source, tokens: Token[], params: QueryParameter[], binds: SqlValue[]): string {
  const out: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    const up = t.text.toUpperCase();
    if (t.kind === 'op' && COMPARISON.has(t.text)) out.push(t.text === '!=' ? '<>' : t.text);
    else if (t.kind === 'number') {
      binds.push(/^\d+$/.test(t.text) ? BigInt(t.text) : Number(t.text));
      out.push('?');
    } else if (t.kind === 'string') {
      binds.push(t.text);
      out.push('?');
    } else if (t.kind === 'param') {
      binds.push(
        paramValue(
          params.find((p) => p.name === t.text),
          t.text,
        ),
      );
      out.push('?');
    } else if (t.kind === 'ident' && (up === 'TRUE' || up === 'FALSE')) out.push(up === 'TRUE' ? '1' : '0');
    else if (
      t.kind === 'ident' &&
      (up === 'TIMESTAMP' || up === 'DATE') &&
      tokens[i + 1]?.kind === 'string'
    ) {
      const lit = tokens[++i]!.text;
      binds.push(
        up === 'DATE'
          ? lit
          : parseTimestamp(lit.replace(' ', 'T').replace(/(\+00(:00)?| UTC)$/, 'Z')) / 1000n,
      );
      out.push('?');
    } else if (t.kind === 'ident' && KEYWORDS.has(up)) out.push(up);
    else if (t.kind === 'ident' || t.kind === 'quoted') out.push(`"${column(table, t.text).name}"`);
    else throw invalidQuery(`Syntax error: Unexpected "${t.text}" at [1:${t.pos + 1}]`);
  }
  return out.join(' ');
}

function resultFields(table: Source, q: SelectQuery): Field[] {
  let unnamed = 0;
  return q.items.flatMap((item): Field[] => {
    if (item.kind === 'star') return table.fields;
    if (item.kind === 'aggregate')
      return [{ name: item.alias ?? `f${unnamed++}_`, type: 'INT64', mode: 'NULLABLE' }];
    return [{ ...column(table, item.name), name: item.alias ?? column(table, item.name).name }];
  });
}

/** The rows a query reads from `table`: its applied rows, or the result of a view's query. */
function sourceOf(catalog: Catalog, defaultProject: string, table: Table, depth: number): Source {
  if (!table.view) return { fields: table.fields, rows: table.rows() };
  if (depth >= MAX_VIEW_DEPTH) throw invalidQuery(`View ${table.ref.tableId} nests views too deeply`);
  return evaluate(catalog, defaultProject, table.view.query, [], depth + 1);
}

/** Resolves `[project.]dataset.table` of a query. */
function resolveTable(catalog: Catalog, defaultProject: string, q: SelectQuery): Table {
  const path = q.table.length === 2 ? [defaultProject, ...q.table] : q.table;
  if (path.length !== 3)
    throw invalidQuery(
      `Table name "${q.table.join('.')}" missing dataset while no default dataset is set in the request.`,
    );
  return catalog.table({ projectId: path[0]!, datasetId: path[1]!, tableId: path[2]! });
}

/** Runs one query against the catalog. `defaultProject` resolves `dataset.table` references. */
export function runQuery(
  catalog: Catalog,
  defaultProject: string,
  sql: string,
  params: QueryParameter[] = [],
): QueryResult {
  return evaluate(catalog, defaultProject, sql, params, 0);
}

function evaluate(
  catalog: Catalog,
  defaultProject: string,
  sql: string,
  params: QueryParameter[],
  depth: number,
): QueryResult {
  const q = parseSelect(sql);
  const source = sourceOf(catalog, defaultProject, resolveTable(catalog, defaultProject, q), depth);
  const db = new Database(':memory:');
  try {
    loadRows(db, source);
    const binds: SqlValue[] = [];
    const where = q.where.length > 0 ? ` WHERE ${translateWhere(source, q.where, params, binds)}` : '';
    if (isAggregate(q)) {
      const col = (name: string) => column(source, name);
      return runGrouped({ db, source, q, from: from(source, q, where), binds, column: col });
    }
    const fields = resultFields(source, q);
    const order = q.orderBy.map(
      (o) => `"${column(source, aliased(q.items, o.column)).name}" ${o.desc ? 'DESC' : 'ASC'}`,
    );
    const tail = `${order.length ? ` ORDER BY ${order.join(', ')}` : ''}${q.limit !== undefined ? ` LIMIT ${q.limit}` : ''}${q.offset !== undefined ? ` OFFSET ${q.offset}` : ''}`;
    let stmt: Database.Statement;
    try {
      stmt = db.prepare(`SELECT __i FROM ${from(source, q, where)}${tail}`).safeIntegers(true);
    } catch (err) {
      throw invalidQuery(`Syntax error: ${(err as Error).message}`);
    }
    const found = stmt.all(...binds) as Array<Record<string, bigint>>;
    return { fields, rows: found.map((f) => project(source.rows[Number(f.__i)]!, source, q, fields)) };
  } finally {
    db.close();
  }
}

/** The FROM clause: the scratch table with WHERE applied, numbered and filtered by a QUALIFY clause. */
function from(source: Source, q: SelectQuery, where: string): string {
  if (!q.qualify) return `t0${where}`;
  const { partitionBy, orderBy, op, value } = q.qualify;
  const partition = partitionBy.map((c) => `"${column(source, c).name}"`).join(', ');
  const order = orderBy.map((o) => `"${column(source, o.column).name}" ${o.desc ? 'DESC' : 'ASC'}`);
  const over = `${partition ? `PARTITION BY ${partition}` : ''}${order.length ? ` ORDER BY ${order.join(', ')}` : ''}`;
  return `(SELECT *, ROW_NUMBER() OVER (${over}) AS __rn FROM t0${where}) WHERE __rn ${op} ${Number(value)}`;
}

/** Loads the source rows into the scratch table `t0`, with their index in `__i`. */
function loadRows(db: Database.Database, source: Source): void {
  const cols = source.fields.map((f) => `"${f.name}"`);
  db.exec(`CREATE TABLE t0 (__i INTEGER${cols.map((c) => `, ${c}`).join('')})`);
  const insert = db.prepare(`INSERT INTO t0 VALUES (${['?', ...cols.map(() => '?')].join(', ')})`);
  db.transaction(() => {
    for (const [i, r] of source.rows.entries())
      insert.run(i, ...source.fields.map((f) => toSql(r[f.name] ?? null)));
  })();
}

function project(row: Row, table: Source, q: SelectQuery, fields: Field[]): Row {
  const out: Row = {};
  let i = 0;
  for (const item of q.items) {
    if (item.kind === 'star') for (const f of table.fields) out[fields[i++]!.name] = row[f.name] ?? null;
    else if (item.kind === 'column') out[fields[i++]!.name] = row[column(table, item.name).name] ?? null;
  }
  return out;
}
