/**
 * INFORMATION_SCHEMA queries the pipeline runs at startup (stream scope and options, table columns and
 * primary keys, database dialect) and pure parsers of their result rows. Rows may come as the client's
 * default rows or as `json: true` objects; column names are matched case-insensitively because GoogleSQL
 * reports them upper-case and PostgreSQL lower-case.
 */

import { type Dialect, type SpannerType, VALUE_CAPTURE_TYPES, type ValueCaptureType } from './change-record';
import type { SpannerQuery } from './change-stream-query';
import { readBool, readCount, readOptionalString, readString, structFields } from './client-values';
import { SluiceError } from './errors';
import { parseSpannerTypeName } from './spanner-types';

/** A query whose only parameter is a name (stream or table). */
function byName(dialect: Dialect, googleSql: string, postgres: string, value: string): SpannerQuery {
  return dialect === 'POSTGRESQL'
    ? { sql: postgres, params: { p1: value }, types: { p1: 'string' } }
    : { sql: googleSql, params: { name: value }, types: { name: 'string' } };
}

/** Dialect probe; the same text is valid in both dialects. */
export const DATABASE_DIALECT_QUERY: SpannerQuery = {
  sql: "SELECT option_value FROM information_schema.database_options WHERE option_name = 'database_dialect'",
  params: {},
  types: {},
};

/** The stream itself: one row if it exists, with whether it watches the whole database. */
export function changeStreamQueryOf(dialect: Dialect, stream: string): SpannerQuery {
  return byName(
    dialect,
    'SELECT CHANGE_STREAM_NAME, `ALL` FROM INFORMATION_SCHEMA.CHANGE_STREAMS WHERE CHANGE_STREAM_NAME = @name',
    'SELECT change_stream_name, "all" FROM information_schema.change_streams WHERE change_stream_name = $1',
    stream,
  );
}

/** Tables a stream watches explicitly (not listed for `FOR ALL` streams). */
export function changeStreamTablesQuery(dialect: Dialect, stream: string): SpannerQuery {
  return byName(
    dialect,
    'SELECT TABLE_SCHEMA, TABLE_NAME, ALL_COLUMNS FROM INFORMATION_SCHEMA.CHANGE_STREAM_TABLES WHERE CHANGE_STREAM_NAME = @name',
    'SELECT table_schema, table_name, all_columns FROM information_schema.change_stream_tables WHERE change_stream_name = $1',
    stream,
  );
}

/** Columns a stream watches explicitly (not listed for tables watched whole). */
export function changeStreamColumnsQuery(dialect: Dialect, stream: string): SpannerQuery {
  return byName(
    dialect,
    'SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME FROM INFORMATION_SCHEMA.CHANGE_STREAM_COLUMNS WHERE CHANGE_STREAM_NAME = @name',
    'SELECT table_schema, table_name, column_name FROM information_schema.change_stream_columns WHERE change_stream_name = $1',
    stream,
  );
}

/** The stream's explicitly set options (`value_capture_type`, `retention_period`, `partition_mode`, …). */
export function changeStreamOptionsQuery(dialect: Dialect, stream: string): SpannerQuery {
  return byName(
    dialect,
    'SELECT OPTION_NAME, OPTION_VALUE FROM INFORMATION_SCHEMA.CHANGE_STREAM_OPTIONS WHERE CHANGE_STREAM_NAME = @name',
    'SELECT option_name, option_value FROM information_schema.change_stream_options WHERE change_stream_name = $1',
    stream,
  );
}

/** The default schema's name in INFORMATION_SCHEMA: '' in GoogleSQL, `public` in PostgreSQL. */
export function defaultSchemaOf(dialect: Dialect): string {
  return dialect === 'POSTGRESQL' ? 'public' : '';
}

/**
 * A table's schema and its name in the schema. sluice knows a table by the name Spanner gives it in change
 * records: `T` in the default schema, `sch.T` in a named schema (ADR-1405).
 */
export function splitTableName(dialect: Dialect, table: string): { schema: string; name: string } {
  const dot = table.indexOf('.');
  if (dot < 0) return { schema: defaultSchemaOf(dialect), name: table };
  return { schema: table.slice(0, dot), name: table.slice(dot + 1) };
}

/** The inverse of {@link splitTableName}: `name` in the default schema, else `schema.name`. */
export function qualifiedTableName(dialect: Dialect, schema: string, name: string): string {
  return schema === defaultSchemaOf(dialect) ? name : `${schema}.${name}`;
}

/** Every schema but the system ones (INFORMATION_SCHEMA, SPANNER_SYS, pg_catalog). */
export const USER_SCHEMAS_GOOGLE_SQL = "TABLE_SCHEMA NOT IN ('INFORMATION_SCHEMA', 'SPANNER_SYS')";
export const USER_SCHEMAS_POSTGRES =
  "table_schema NOT IN ('information_schema', 'spanner_sys', 'pg_catalog')";

const COLUMNS_GOOGLE_SQL =
  'SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, SPANNER_TYPE, IS_NULLABLE, IS_GENERATED, IS_STORED, IS_HIDDEN ' +
  'FROM INFORMATION_SCHEMA.COLUMNS';
const COLUMNS_POSTGRES =
  'SELECT table_schema, table_name, column_name, ordinal_position, spanner_type, is_nullable, is_generated, is_stored, is_hidden ' +
  'FROM information_schema.columns';
const KEYS_GOOGLE_SQL =
  'SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION FROM INFORMATION_SCHEMA.INDEX_COLUMNS ' +
  "WHERE INDEX_NAME = 'PRIMARY_KEY'";
const KEYS_POSTGRES =
  'SELECT table_schema, table_name, column_name, ordinal_position FROM information_schema.index_columns ' +
  "WHERE index_name = 'PRIMARY_KEY'";

/**
 * The rows of one table, in ordinal order: `googleSql` / `postgres` end where the table's filter goes (after
 * `WHERE` or `AND`), its schema and its name in the schema bound as parameters.
 */
function byTable(dialect: Dialect, googleSql: string, postgres: string, table: string): SpannerQuery {
  const { schema, name } = splitTableName(dialect, table);
  return dialect === 'POSTGRESQL'
    ? {
        sql: `${postgres} table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`,
        params: { p1: schema, p2: name },
        types: { p1: 'string', p2: 'string' },
      }
    : {
        sql: `${googleSql} TABLE_SCHEMA = @schema AND TABLE_NAME = @name ORDER BY ORDINAL_POSITION`,
        params: { schema, name },
        types: { schema: 'string', name: 'string' },
      };
}

/** Columns of one user table (with whether each is generated, stored, hidden), in ordinal order. */
export function tableColumnsQuery(dialect: Dialect, table: string): SpannerQuery {
  return byTable(dialect, `${COLUMNS_GOOGLE_SQL} WHERE`, `${COLUMNS_POSTGRES} WHERE`, table);
}

/** Primary-key columns of one user table, in key order. */
export function primaryKeyQuery(dialect: Dialect, table: string): SpannerQuery {
  return byTable(dialect, `${KEYS_GOOGLE_SQL} AND`, `${KEYS_POSTGRES} AND`, table);
}

/**
 * The rows of every user table, by table then ordinal: `googleSql` / `postgres` end where the user-schema
 * filter goes (after `WHERE` or `AND`), as in {@link byTable}.
 */
function overUserTables(dialect: Dialect, googleSql: string, postgres: string): SpannerQuery {
  const sql =
    dialect === 'POSTGRESQL'
      ? `${postgres} ${USER_SCHEMAS_POSTGRES} ORDER BY table_schema, table_name, ordinal_position`
      : `${googleSql} ${USER_SCHEMAS_GOOGLE_SQL} ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION`;
  return { sql, params: {}, types: {} };
}

/** Columns of every user table, in every user schema (one query for the whole database). */
export function allColumnsQuery(dialect: Dialect): SpannerQuery {
  return overUserTables(dialect, `${COLUMNS_GOOGLE_SQL} WHERE`, `${COLUMNS_POSTGRES} WHERE`);
}

/** Primary-key columns of every user table. */
export function allPrimaryKeysQuery(dialect: Dialect): SpannerQuery {
  return overUserTables(dialect, `${KEYS_GOOGLE_SQL} AND`, `${KEYS_POSTGRES} AND`);
}

/** A result row with lower-cased column names. */
function lowerRow(row: unknown, path: string): Record<string, unknown> {
  const fields = structFields(row, path);
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => [k.toLowerCase(), v]));
}

/**
 * The table a row names, as sluice knows it: `T` in the default schema ('' or PostgreSQL's `public`; the
 * service reserves `public` as a schema name in both dialects), `sch.T` in a named schema. A row without a
 * TABLE_SCHEMA column is the default schema's.
 */
export function rowTable(r: Record<string, unknown>, path: string): string {
  const name = readString(r['table_name'], `${path}.table_name`);
  const schema =
    r['table_schema'] == null ? '' : readOptionalString(r['table_schema'], `${path}.table_schema`);
  return schema === '' || schema === 'public' ? name : `${schema}.${name}`;
}

/** Reads the dialect probe's result; no row means GoogleSQL (databases created before PG existed). */
export function parseDatabaseDialect(rows: unknown[]): Dialect {
  const [first] = rows;
  if (first === undefined) return 'GOOGLE_STANDARD_SQL';
  const value = readString(
    lowerRow(first, 'database_options[0]')['option_value'],
    'database_options.option_value',
  );
  if (value !== 'GOOGLE_STANDARD_SQL' && value !== 'POSTGRESQL')
    throw new Error(`unknown database dialect ${value}`);
  return value;
}

/** A flag column: BOOL in GoogleSQL, `YES` / `NO` text in PostgreSQL's INFORMATION_SCHEMA. */
function readFlag(value: unknown, path: string): boolean {
  if (value === 'YES' || value === 'NO') return value === 'YES';
  return readBool(value, path);
}

/** Which tables and columns a stream watches. */
export interface ChangeStreamScope {
  /** `FOR ALL`: every table, including future ones. */
  all: boolean;
  /** Explicitly watched tables; `columns` is `'all'` or the watched non-key columns. */
  tables: Map<string, { columns: 'all' | string[] }>;
}

/**
 * Combines the stream, tables and columns results. Returns `undefined` when the stream does not exist.
 */
export function parseChangeStreamScope(
  streamRows: unknown[],
  tableRows: unknown[],
  columnRows: unknown[],
): ChangeStreamScope | undefined {
  const [stream] = streamRows;
  if (stream === undefined) return undefined;
  const all = readFlag(lowerRow(stream, 'change_streams[0]')['all'], 'change_streams.all');
  const tables = new Map<string, { columns: 'all' | string[] }>();
  tableRows.forEach((row, i) => {
    const r = lowerRow(row, `change_stream_tables[${i}]`);
    const allColumns = readFlag(r['all_columns'], `change_stream_tables[${i}].all_columns`);
    tables.set(rowTable(r, `change_stream_tables[${i}]`), { columns: allColumns ? 'all' : [] });
  });
  columnRows.forEach((row, i) => {
    const r = lowerRow(row, `change_stream_columns[${i}]`);
    const table = rowTable(r, `change_stream_columns[${i}]`);
    const entry = tables.get(table) ?? { columns: [] };
    if (entry.columns !== 'all')
      entry.columns.push(readString(r['column_name'], `change_stream_columns[${i}].column_name`));
    tables.set(table, entry);
  });
  return { all, tables };
}

/** A stream's options, with the documented defaults filled in for options not listed. */
export interface ChangeStreamOptions {
  valueCaptureType: ValueCaptureType;
  /** Retention in seconds. */
  retentionSeconds: number;
  partitionMode: 'IMMUTABLE_KEY_RANGE' | 'MUTABLE_KEY_RANGE';
  /** Every option row as read, for diagnostics. */
  raw: Record<string, string>;
}

/** Retention assumed when the option is not listed: the shortest default any documentation gives (1 day). */
export const DEFAULT_RETENTION_SECONDS = 86_400;

const DURATION_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** Parses a Spanner timespan such as `7d`, `36h`, `1440m`, `86400s`. */
export function parseRetentionPeriod(text: string): number {
  const m = /^(\d+)([smhd])$/.exec(text.trim());
  if (!m) throw new Error(`invalid retention_period ${JSON.stringify(text)}: expected e.g. 7d, 36h, 1440m`);
  return Number(m[1]) * DURATION_UNITS[m[2]!]!;
}

/** Reads CHANGE_STREAM_OPTIONS rows; a missing row means the default (the emulator lists only set options). */
export function parseChangeStreamOptions(rows: unknown[]): ChangeStreamOptions {
  const raw: Record<string, string> = {};
  rows.forEach((row, i) => {
    const r = lowerRow(row, `change_stream_options[${i}]`);
    const name = readString(r['option_name'], `change_stream_options[${i}].option_name`);
    raw[name.toLowerCase()] = readOptionalString(
      r['option_value'],
      `change_stream_options[${i}].option_value`,
    );
  });
  const capture = raw['value_capture_type'] || 'OLD_AND_NEW_VALUES';
  if (!(VALUE_CAPTURE_TYPES as readonly string[]).includes(capture)) {
    throw new Error(`unknown value_capture_type ${JSON.stringify(capture)}`);
  }
  const mode = raw['partition_mode'] || 'IMMUTABLE_KEY_RANGE';
  if (mode !== 'IMMUTABLE_KEY_RANGE' && mode !== 'MUTABLE_KEY_RANGE') {
    throw new Error(`unknown partition_mode ${JSON.stringify(mode)}`);
  }
  const retention = raw['retention_period'];
  return {
    valueCaptureType: capture as ValueCaptureType,
    retentionSeconds: retention ? parseRetentionPeriod(retention) : DEFAULT_RETENTION_SECONDS,
    partitionMode: mode,
    raw,
  };
}

/** One column of a user table. */
export interface TableColumn {
  name: string;
  type: SpannerType;
  nullable: boolean;
  ordinalPosition: number;
  /** A generated column: `stored` or `virtual` (not stored). Change streams never carry non-key ones. */
  generated?: 'stored' | 'virtual';
  /** HIDDEN (e.g. a TOKENLIST of full-text search): not in `SELECT *`, never replicated. */
  hidden?: boolean;
  /** The `SPANNER_TYPE` text of a type sluice has no mapping for (the table cannot be replicated). */
  unknownType?: string;
}

/** A user table's columns and primary key, as the replica schema needs them. */
export interface TableSchema {
  name: string;
  columns: TableColumn[];
  /** Key column names in key order. */
  primaryKey: string[];
}

/** A configured table the database does not have (permanent: it will not appear by retrying). */
export class TableNotFoundError extends SluiceError {
  override readonly name = 'TableNotFoundError';
  constructor(readonly table: string) {
    super('permanent', `table ${table} not found or has no columns`);
  }
}

/** The Spanner type of a column that is never replicated (hidden, virtual): kept as text, never mapped. */
const OPAQUE = (text: string): SpannerType => ({ code: text.trim().toUpperCase() });

function readColumn(dialect: Dialect, r: Record<string, unknown>, path: string): TableColumn {
  const name = readString(r['column_name'], `${path}.column_name`);
  const typeText = readString(r['spanner_type'], `${path}.spanner_type`);
  const generatedText = readOptionalString(r['is_generated'], `${path}.is_generated`).toUpperCase();
  const stored = readOptionalString(r['is_stored'], `${path}.is_stored`).toUpperCase() === 'YES';
  const hiddenValue = r['is_hidden'];
  const hidden =
    (hiddenValue !== null && hiddenValue !== undefined && readFlag(hiddenValue, `${path}.is_hidden`)) ||
    /^(spanner\.)?tokenlist$/i.test(typeText.trim());
  const column: TableColumn = {
    name,
    type: OPAQUE(typeText),
    nullable: readString(r['is_nullable'], `${path}.is_nullable`).toUpperCase() === 'YES',
    ordinalPosition: readCount(r['ordinal_position'], `${path}.ordinal_position`),
  };
  if (generatedText === 'ALWAYS') column.generated = stored ? 'stored' : 'virtual';
  if (hidden) column.hidden = true;
  if (hidden || column.generated === 'virtual') return column;
  try {
    column.type = parseSpannerTypeName(typeText, dialect);
  } catch {
    // Only a replicated table with this column fails (see planReplica); the rest of the catalog is fine.
    column.unknownType = typeText;
  }
  return column;
}

function readKeys(keyRows: Array<Record<string, unknown>>, path: string): string[] {
  const keys = keyRows.map((r, i) => ({
    name: readString(r['column_name'], `${path}[${i}].column_name`),
    position: readCount(r['ordinal_position'], `${path}[${i}].ordinal_position`),
  }));
  keys.sort((a, b) => a.position - b.position);
  return keys.map((k) => k.name);
}

/**
 * Reads the columns and primary-key results of one table. A column of a type sluice does not know is kept
 * with `unknownType` (planning a replica of it fails, naming table and column).
 * @throws TableNotFoundError when the table has no columns (it does not exist).
 */
export function parseTableSchema(
  table: string,
  dialect: Dialect,
  columnRows: unknown[],
  keyRows: unknown[],
): TableSchema {
  if (columnRows.length === 0) throw new TableNotFoundError(table);
  const columns = columnRows.map((row, i) =>
    readColumn(dialect, lowerRow(row, `columns[${i}]`), `columns[${i}]`),
  );
  columns.sort((a, b) => a.ordinalPosition - b.ordinalPosition);
  const keys = readKeys(
    keyRows.map((row, i) => lowerRow(row, `index_columns[${i}]`)),
    'index_columns',
  );
  return { name: table, columns, primaryKey: keys };
}

/** Reads the all-tables column and key results into one schema per table, in table-name order. */
export function parseTableSchemas(
  dialect: Dialect,
  columnRows: unknown[],
  keyRows: unknown[],
): TableSchema[] {
  const byTable = new Map<string, { columns: unknown[]; keys: unknown[] }>();
  const entry = (name: string) => {
    const found = byTable.get(name);
    if (found) return found;
    const created = { columns: [] as unknown[], keys: [] as unknown[] };
    byTable.set(name, created);
    return created;
  };
  columnRows.forEach((row, i) => {
    entry(rowTable(lowerRow(row, `columns[${i}]`), `columns[${i}]`)).columns.push(row);
  });
  keyRows.forEach((row, i) => {
    const name = rowTable(lowerRow(row, `index_columns[${i}]`), `index_columns[${i}]`);
    if (byTable.has(name)) entry(name).keys.push(row);
  });
  return [...byTable.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, e]) => parseTableSchema(name, dialect, e.columns, e.keys));
}
