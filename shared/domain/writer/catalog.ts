/**
 * The writer's view of the database: every base table with its columns (types, nullability, generated), its
 * primary key and, per column, how many secondary indexes contain it — read from INFORMATION_SCHEMA in either
 * dialect by three queries. The index counts make the writer's cell estimate index-aware.
 */
import type { Dialect, SpannerType } from '../change-record';
import type { SpannerQuery } from '../change-stream-query';
import { readCount, readString, structFields } from '../client-values';
import { rowTable, USER_SCHEMAS_GOOGLE_SQL, USER_SCHEMAS_POSTGRES } from '../information-schema';
import { parseSpannerTypeName } from '../spanner-types';

/** One writable (or generated) column. */
export interface WriterColumn {
  name: string;
  /** Undefined when the column's type is one the writer does not know (writing it is a problem). */
  type: SpannerType | undefined;
  /** The SPANNER_TYPE text, for messages. */
  typeName: string;
  nullable: boolean;
  generated: boolean;
  /** Secondary indexes containing the column (as a key or STORING column). */
  indexes: number;
}

/** One base table. */
export interface WriterTable {
  name: string;
  columns: WriterColumn[];
  /** Key column names in key order. */
  primaryKey: string[];
  /** Secondary indexes on the table. */
  indexes: number;
}

/** Every base table of the database. */
export interface WriterCatalog {
  dialect: Dialect;
  tables: WriterTable[];
}

/**
 * `SELECT columns FROM INFORMATION_SCHEMA.view` over the user schemas, then `and` (a further condition, or
 * nothing); PostgreSQL names the same columns and view in lower case.
 */
function overUserSchemas(dialect: Dialect, columns: string, view: string, and = ''): SpannerQuery {
  const sql =
    dialect === 'POSTGRESQL'
      ? `SELECT ${columns.toLowerCase()} FROM information_schema.${view.toLowerCase()} WHERE ${USER_SCHEMAS_POSTGRES}`
      : `SELECT ${columns} FROM INFORMATION_SCHEMA.${view} WHERE ${USER_SCHEMAS_GOOGLE_SQL}`;
  return { sql: sql + and, params: {}, types: {} };
}

/** Base tables. */
export function writerTablesQuery(dialect: Dialect): SpannerQuery {
  const type = dialect === 'POSTGRESQL' ? 'table_type' : 'TABLE_TYPE';
  return overUserSchemas(dialect, 'TABLE_SCHEMA, TABLE_NAME', 'TABLES', ` AND ${type} = 'BASE TABLE'`);
}

/** Every column of every table. */
export function writerColumnsQuery(dialect: Dialect): SpannerQuery {
  return overUserSchemas(
    dialect,
    'TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, SPANNER_TYPE, IS_NULLABLE, IS_GENERATED',
    'COLUMNS',
  );
}

/** Every column of every index (the primary key included, as `PRIMARY_KEY`). */
export function writerIndexColumnsQuery(dialect: Dialect): SpannerQuery {
  return overUserSchemas(
    dialect,
    'TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, COLUMN_NAME, ORDINAL_POSITION',
    'INDEX_COLUMNS',
  );
}

function lower(row: unknown, path: string): Record<string, unknown> {
  return Object.fromEntries(Object.entries(structFields(row, path)).map(([k, v]) => [k.toLowerCase(), v]));
}

function parseColumn(row: Record<string, unknown>, i: number, dialect: Dialect) {
  const typeName = readString(row['spanner_type'], `columns[${i}].spanner_type`);
  let type: SpannerType | undefined;
  try {
    type = parseSpannerTypeName(typeName, dialect);
  } catch {
    type = undefined;
  }
  const generated = row['is_generated'];
  return {
    table: rowTable(row, `columns[${i}]`),
    position: readCount(row['ordinal_position'], `columns[${i}].ordinal_position`),
    column: {
      name: readString(row['column_name'], `columns[${i}].column_name`),
      type,
      typeName,
      nullable: readString(row['is_nullable'], `columns[${i}].is_nullable`).toUpperCase() === 'YES',
      generated: typeof generated === 'string' && generated.toUpperCase() === 'ALWAYS',
      indexes: 0,
    } satisfies WriterColumn,
  };
}

/** Builds the catalog from the three queries' rows (default client rows or `json: true` objects). */
export function parseWriterCatalog(
  dialect: Dialect,
  tableRows: unknown[],
  columnRows: unknown[],
  indexRows: unknown[],
): WriterCatalog {
  const tables = new Map<string, WriterTable>();
  tableRows.forEach((r, i) => {
    const name = rowTable(lower(r, `tables[${i}]`), `tables[${i}]`);
    tables.set(name, { name, columns: [], primaryKey: [], indexes: 0 });
  });
  const positions = new Map<WriterColumn, number>();
  columnRows.forEach((r, i) => {
    const { table, position, column } = parseColumn(lower(r, `columns[${i}]`), i, dialect);
    const t = tables.get(table);
    if (!t) return; // a view's column
    t.columns.push(column);
    positions.set(column, position);
  });
  for (const t of tables.values())
    t.columns.sort((a, b) => (positions.get(a) ?? 0) - (positions.get(b) ?? 0));
  addIndexes(tables, indexRows);
  return { dialect, tables: [...tables.values()] };
}

function addIndexes(tables: Map<string, WriterTable>, rows: unknown[]): void {
  const keys = new Map<string, Array<{ column: string; position: number }>>();
  const seen = new Set<string>();
  rows.forEach((r, i) => {
    const row = lower(r, `index_columns[${i}]`);
    const t = tables.get(rowTable(row, `index_columns[${i}]`));
    if (!t) return;
    const index = readString(row['index_name'], `index_columns[${i}].index_name`);
    const column = readString(row['column_name'], `index_columns[${i}].column_name`);
    if (index === 'PRIMARY_KEY') {
      const position = readCount(row['ordinal_position'], `index_columns[${i}].ordinal_position`);
      keys.set(t.name, [...(keys.get(t.name) ?? []), { column, position }]);
      return;
    }
    if (!seen.has(`${t.name}\u0000${index}`)) t.indexes++;
    seen.add(`${t.name}\u0000${index}`);
    const c = t.columns.find((x) => x.name === column);
    if (c && !seen.has(`${t.name}\u0000${index}\u0000${column}`)) c.indexes++;
    seen.add(`${t.name}\u0000${index}\u0000${column}`);
  });
  for (const [name, parts] of keys)
    (tables.get(name) as WriterTable).primaryKey = parts
      .sort((a, b) => a.position - b.position)
      .map((p) => p.column);
}

/** The first item of each name, exact and case-folded: what `find` over the list would return, in O(1). */
interface NameIndex<T> {
  size: number;
  exact: Map<string, T>;
  folded: Map<string, T>;
}

const nameIndexes = new WeakMap<readonly { name: string }[], NameIndex<{ name: string }>>();

/**
 * The item named `name`, matched exactly, then (GoogleSQL) case-insensitively; the first in list order either
 * way. Every mutation of a request looks its table and columns up here, so the lookup is by a map built once
 * per list (again if the list grew).
 */
function byName<T extends { name: string }>(
  items: readonly T[],
  name: string,
  dialect: Dialect,
): T | undefined {
  let index = nameIndexes.get(items) as NameIndex<T> | undefined;
  if (!index || index.size !== items.length) {
    index = { size: items.length, exact: new Map(), folded: new Map() };
    for (const item of items) {
      if (!index.exact.has(item.name)) index.exact.set(item.name, item);
      const folded = item.name.toLowerCase();
      if (!index.folded.has(folded)) index.folded.set(folded, item);
    }
    nameIndexes.set(items, index);
  }
  const exact = index.exact.get(name);
  if (exact || dialect === 'POSTGRESQL') return exact;
  return index.folded.get(name.toLowerCase());
}

/** The table named `name`: GoogleSQL names match case-insensitively, PostgreSQL names exactly. */
export function findTable(catalog: WriterCatalog, name: string): WriterTable | undefined {
  return byName(catalog.tables, name, catalog.dialect);
}

/** The column named `name` of `table`, matched like {@link findTable}. */
export function findColumn(
  catalog: WriterCatalog,
  table: WriterTable,
  name: string,
): WriterColumn | undefined {
  return byName(table.columns, name, catalog.dialect);
}
