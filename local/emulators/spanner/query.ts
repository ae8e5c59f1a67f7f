/**
 * Runs a translated query against a snapshot: prefixes one CTE per mentioned user table (its versions as
 * the read view sees them), executes it in SQLite and types the result columns from their origin columns.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { Code, SpannerError, type SpannerTypeJson, type WireValue } from './hooks';
import type { InformationSchema } from './info-schema';
import { physicalColumn, type Schema } from './schema';
import { physicalName, qi, type ReadView, type Storage } from './storage';
import type { Dialect } from './tokenizer';
import { type Translated, translate } from './translate';
import { inferType, type StoredValue, storedToWire } from './values';

/** Result of a query in wire form. */
export interface QueryResult {
  fields: Array<{ name: string; type: SpannerTypeJson }>;
  rows: WireValue[][];
}

/** What a query needs from its database. */
export interface QueryContext {
  db: BetterSqlite3.Database;
  schema: Schema;
  storage: Storage;
  info: InformationSchema;
  dialect: Dialect;
}

/** Wraps SQLite errors as the INVALID_ARGUMENT Spanner gives for SQL it cannot analyse. */
export function sqliteError(err: unknown): SpannerError {
  if (err instanceof SpannerError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new SpannerError(Code.INVALID_ARGUMENT, `Unsupported or invalid SQL (emulator): ${message}`);
}

/** SQL text with the snapshot CTEs of every mentioned table in front. */
export function withSnapshot(ctx: QueryContext, t: Translated, view: ReadView): string {
  const ctes = [...t.tables].map((name) => {
    const table = ctx.schema.get(name);
    // Hidden columns (TOKENLIST) stay out of `SELECT *`, and are never returned by a query.
    return `${qi(table.name)} AS (${ctx.storage.viewSql(table, view, false, false)})`;
  });
  if (ctes.length === 0) return t.sql;
  if (t.startsWithWith) return `WITH ${ctes.join(', ')}, ${t.sql.replace(/^WITH\s+/i, '')}`;
  return `WITH ${ctes.join(', ')} ${t.sql}`;
}

/** A result column that is a bare parameter (`SELECT @v`, `SELECT $1`) has the parameter's declared type. */
function paramColumnType(
  col: BetterSqlite3.ColumnDefinition,
  paramTypes: Record<string, SpannerTypeJson>,
): SpannerTypeJson | undefined {
  if (col.table) return undefined;
  const name = /^@(\w+)$/.exec(col.name)?.[1];
  const type = name === undefined ? undefined : paramTypes[name];
  return type && type.code !== 'TYPE_CODE_UNSPECIFIED' ? type : undefined;
}

function columnType(
  ctx: QueryContext,
  col: BetterSqlite3.ColumnDefinition,
  values: StoredValue[],
  paramTypes: Record<string, SpannerTypeJson>,
): SpannerTypeJson {
  const declared = paramColumnType(col, paramTypes);
  if (declared) return declared;
  if (col.table && col.column) {
    if (col.database === 'information_schema') {
      const t = ctx.info.typeOf(col.table, col.column);
      if (t) return t;
    } else if (col.table.startsWith('v$')) {
      const physicalTable = col.table;
      const table = [...ctx.schema.tablesByName.values()].find(
        (t) => (t.physical ?? physicalName(t.name)) === physicalTable,
      );
      const c = table?.columns.find((x) => physicalColumn(x) === col.column);
      if (c) return c.ct.type;
    }
  }
  return inferType(values);
}

/** Prepares SQL, turning SQLite errors into Spanner's. */
export function prepare(ctx: QueryContext, sql: string): BetterSqlite3.Statement {
  try {
    return ctx.db.prepare(sql);
  } catch (err) {
    throw sqliteError(err);
  }
}

/** Raw result of a query: SQLite column descriptions and stored values. */
export interface RawResult {
  columns: BetterSqlite3.ColumnDefinition[];
  rows: StoredValue[][];
}

/** Runs a SELECT (already translated) at `view` with stored parameter values; values stay in stored form. */
export function runRaw(
  ctx: QueryContext,
  t: Translated,
  view: ReadView,
  params: Record<string, StoredValue>,
): RawResult {
  ctx.info.refresh(ctx.schema);
  const stmt = prepare(ctx, withSnapshot(ctx, t, view));
  if (!stmt.reader) throw new SpannerError(Code.INVALID_ARGUMENT, 'Statement is not a query');
  try {
    const rows = stmt.safeIntegers(true).raw(true).all(params) as StoredValue[][];
    return { columns: stmt.columns(), rows };
  } catch (err) {
    throw sqliteError(err);
  }
}

/**
 * Runs a SELECT (already translated) at `view` and types and encodes the result; `paramTypes` (the request's,
 * keyed as the parameters are) type the columns that are bare parameters.
 */
export function runTranslated(
  ctx: QueryContext,
  t: Translated,
  view: ReadView,
  params: Record<string, StoredValue>,
  paramTypes: Record<string, SpannerTypeJson> = {},
): QueryResult {
  const raw = runRaw(ctx, t, view, params);
  const fields = raw.columns.map((c, i) => ({
    name: c.name,
    type: columnType(
      ctx,
      c,
      raw.rows.map((r) => r[i] ?? null),
      paramTypes,
    ),
  }));
  const rows = raw.rows.map((r) =>
    r.map((v, i) => storedToWire(v, (fields[i] as { type: SpannerTypeJson }).type)),
  );
  return { fields, rows };
}

/** Translates and runs a query. */
export function runQuery(
  ctx: QueryContext,
  sql: string,
  view: ReadView,
  params: Record<string, StoredValue>,
): QueryResult {
  return runTranslated(ctx, translate(sql, ctx.dialect, ctx.schema), view, params);
}
