/**
 * Runs a compiled query against a snapshot: prefixes one CTE per user table it reads (its versions as the
 * read view sees them) and executes it in SQLite; the compiler gives the result columns their types.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { Code, SpannerError, type SpannerTypeJson, type WireValue } from './hooks';
import type { InformationSchema } from './info-schema';
import type { Schema } from './schema';
import { type CompiledStatement, compileStatement } from './sql';
import { qi, type ReadView, type Storage } from './storage';
import type { Dialect } from './tokenizer';
import { type StoredValue, storedToWire } from './values';

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
export function withSnapshot(
  ctx: QueryContext,
  t: Pick<CompiledStatement, 'sql' | 'tables' | 'startsWithWith'>,
  view: ReadView,
): string {
  const ctes = [...t.tables].map((name) => {
    const table = ctx.schema.get(name);
    // Hidden columns (TOKENLIST) stay out of `SELECT *`, and are never returned by a query.
    return `${qi(table.name)} AS (${ctx.storage.viewSql(table, view, false, false)})`;
  });
  if (ctes.length === 0) return t.sql;
  if (t.startsWithWith) return `WITH ${ctes.join(', ')}, ${t.sql.replace(/^WITH\s+/i, '')}`;
  return `WITH ${ctes.join(', ')} ${t.sql}`;
}

/** Prepares SQL, turning SQLite errors into Spanner's. */
export function prepare(ctx: QueryContext, sql: string): BetterSqlite3.Statement {
  try {
    return ctx.db.prepare(sql);
  } catch (err) {
    throw sqliteError(err);
  }
}

/** Runs compiled SQL at `view` with its bound parameters; values stay in stored form. */
export function runRaw(
  ctx: QueryContext,
  c: Pick<CompiledStatement, 'sql' | 'tables' | 'startsWithWith' | 'params'>,
  view: ReadView,
): StoredValue[][] {
  const stmt = prepare(ctx, withSnapshot(ctx, c, view));
  if (!stmt.reader) throw new SpannerError(Code.INVALID_ARGUMENT, 'Statement is not a query');
  try {
    return stmt.safeIntegers(true).raw(true).all(c.params) as StoredValue[][];
  } catch (err) {
    throw sqliteError(err);
  }
}

/** The catalog queries compile against. */
export function catalogOf(ctx: QueryContext) {
  ctx.info.refresh(ctx.schema);
  return { schema: ctx.schema, info: ctx.info };
}

/** Compiles and runs a query at `view`; result columns are typed by the compiler, never by their values. */
export function runQuery(
  ctx: QueryContext,
  sql: string,
  view: ReadView,
  params: Record<string, WireValue> = {},
  types: Record<string, SpannerTypeJson> = {},
): QueryResult {
  const c = compileStatement(sql, ctx.dialect, catalogOf(ctx), params, types);
  const rows = runRaw(ctx, c, view);
  return {
    fields: c.columns,
    rows: rows.map((r) => r.map((v, i) => storedToWire(v, (c.columns[i] as { type: SpannerTypeJson }).type))),
  };
}
