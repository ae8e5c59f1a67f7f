/**
 * FOREIGN KEY and CHECK constraints: validated when DDL creates them, verified for every row a transaction
 * wrote when it commits (after all its mutations, as Spanner does), with the official emulator's codes and
 * messages. CHECK expressions are compiled to SQLite like queries and evaluated over the written row.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { Code, SpannerError, type SpannerTypeJson } from './hooks';
import {
  checkConstraintViolated,
  debugKey,
  foreignKeyReferencedKeyNotFound,
  foreignKeyReferencingKeyFound,
} from './messages';
import type { CheckConstraint, ForeignKey, Schema, Table } from './schema';
import { compileRowCondition } from './sql';
import { qi, type ReadView, type Row, type Storage } from './storage';
import { type StoredValue, storedToWire } from './values';

/** What a commit hands to the verifier. */
export interface ConstraintContext {
  schema: Schema;
  storage: Storage;
  db: BetterSqlite3.Database;
  /** The committing transaction's view: the latest committed data plus its own writes. */
  view: ReadView;
}

/** A row the transaction wrote: its image before (latest committed) and after (null when deleted). */
export interface WrittenRow {
  table: Table;
  before: Row | undefined;
  after: Row | undefined;
}

function checkSql(schema: Schema, table: Table, check: CheckConstraint): string {
  const expr = compileRowCondition(check.expression, schema, table);
  const cols = table.columns.map((c) => `? AS ${qi(c.name)}`).join(', ');
  return `SELECT (${expr}) AS ok FROM (SELECT ${cols})`;
}

function keyOf(table: Table, row: Row, names: string[]): { values: StoredValue[]; types: SpannerTypeJson[] } {
  const types = names.map((n) => table.columns.find((c) => c.name === n)?.ct.type ?? { code: 'STRING' });
  return { values: names.map((n) => row[n] ?? null), types };
}

function debugOf(key: { values: StoredValue[]; types: SpannerTypeJson[] }): string {
  return debugKey(
    key.values.map((v, i) => storedToWire(v, key.types[i] as SpannerTypeJson)),
    key.types,
  );
}

function exists(ctx: ConstraintContext, table: Table, columns: string[], values: StoredValue[]): boolean {
  const cond = columns.map((c) => `${qi(c)} IS ?`).join(' AND ');
  const sql = `SELECT 1 FROM (${ctx.storage.viewSql(table, ctx.view)}) WHERE ${cond} LIMIT 1`;
  return ctx.db.prepare(sql).get(...values) !== undefined;
}

/** Names a constraint's columns as the table spells them (DDL may use another case). */
function columnNames(schema: Schema, table: Table, names: string[]): string[] {
  return names.map((n) => schema.column(table, n).name);
}

function verifyChecks(ctx: ConstraintContext, w: WrittenRow, row: Row): void {
  for (const check of w.table.checks ?? []) {
    const values = w.table.columns.map((c) => row[c.name] ?? null);
    const ok = ctx.db
      .prepare(checkSql(ctx.schema, w.table, check))
      .pluck()
      .get(...values);
    if (ok === 0 || ok === 0n) {
      const pk = keyOf(
        w.table,
        row,
        w.table.primaryKey.map((k) => k.name),
      );
      throw checkConstraintViolated(check.name, w.table.name, debugOf(pk));
    }
  }
}

function verifyReferencing(ctx: ConstraintContext, w: WrittenRow, row: Row): void {
  for (const fk of (w.table.foreignKeys ?? []).filter((f) => f.enforced)) {
    const key = keyOf(w.table, row, columnNames(ctx.schema, w.table, fk.columns));
    if (key.values.some((v) => v === null)) continue; // a NULL in the key: nothing is referenced
    const parent = ctx.schema.get(fk.referencedTable);
    if (!exists(ctx, parent, columnNames(ctx.schema, parent, fk.referencedColumns), key.values))
      throw foreignKeyReferencedKeyNotFound({
        fk: fk.name,
        referencing: w.table.name,
        referenced: parent.name,
        key: debugOf(key),
      });
  }
}

function verifyReferenced(ctx: ConstraintContext, w: WrittenRow): void {
  const before = w.before;
  if (!before) return;
  for (const { table: child, fk } of ctx.schema.referencingKeys(w.table.name)) {
    if (!fk.enforced) continue;
    const refCols = columnNames(ctx.schema, w.table, fk.referencedColumns);
    const old = keyOf(w.table, before, refCols);
    const kept = w.after && refCols.every((c) => sameValue(w.after?.[c] ?? null, before[c] ?? null));
    if (kept || old.values.some((v) => v === null)) continue;
    if (exists(ctx, child, columnNames(ctx.schema, child, fk.columns), old.values))
      throw foreignKeyReferencingKeyFound({
        fk: fk.name,
        referencing: child.name,
        referenced: w.table.name,
        key: debugOf(old),
      });
  }
}

function sameValue(a: StoredValue, b: StoredValue): boolean {
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  return a === b || (a !== null && b !== null && String(a) === String(b));
}

/** Verifies every constraint a set of written rows touches. @throws SpannerError as the service answers. */
export function verifyConstraints(ctx: ConstraintContext, rows: WrittenRow[]): void {
  for (const w of rows) {
    if (w.after) {
      verifyChecks(ctx, w, w.after);
      verifyReferencing(ctx, w, w.after);
    }
    verifyReferenced(ctx, w);
  }
}

function precondition(message: string): never {
  throw new SpannerError(Code.FAILED_PRECONDITION, message);
}

function validateForeignKey(schema: Schema, table: Table, fk: ForeignKey): void {
  for (const c of fk.columns)
    if (!table.columns.some((x) => x.name.toLowerCase() === c.toLowerCase()))
      precondition(`Column \`${c}\` not found for table \`${table.name}\` in foreign key \`${fk.name}\`.`);
  const parent =
    fk.referencedTable.toLowerCase() === table.name.toLowerCase() ? table : schema.find(fk.referencedTable);
  if (!parent) throw new SpannerError(Code.NOT_FOUND, `Table not found: ${fk.referencedTable}`);
  fk.referencedTable = parent.name;
  for (const c of fk.referencedColumns)
    if (!parent.columns.some((x) => x.name.toLowerCase() === c.toLowerCase()))
      precondition(`Column \`${c}\` not found for table \`${parent.name}\` in foreign key \`${fk.name}\`.`);
}

function validateCheck(
  schema: Schema,
  table: Table,
  check: CheckConstraint,
  db: BetterSqlite3.Database,
): void {
  try {
    db.prepare(checkSql(schema, table, check))
      .pluck()
      .get(...table.columns.map(() => null));
  } catch (err) {
    if (err instanceof SpannerError) throw err;
    throw new SpannerError(
      Code.INVALID_ARGUMENT,
      `Invalid check constraint expression \`${check.name}\`: ${(err as Error).message}`,
    );
  }
}

/**
 * Validates the constraints of a table being created (referenced tables and columns exist, CHECK
 * expressions translate and evaluate). The table itself is not yet in `schema`.
 */
export function validateTableConstraints(schema: Schema, table: Table, db: BetterSqlite3.Database): void {
  for (const fk of table.foreignKeys ?? []) validateForeignKey(schema, table, fk);
  for (const check of table.checks ?? []) validateCheck(schema, table, check, db);
}

/** Names of constraints that keep `table` (or one of its `column`s) from being dropped. */
export function constraintsUsing(schema: Schema, table: Table, column?: string): string[] {
  const col = column?.toLowerCase();
  const names: string[] = [];
  for (const { table: child, fk } of schema.referencingKeys(table.name))
    if (child !== table && (!col || fk.referencedColumns.some((c) => c.toLowerCase() === col)))
      names.push(fk.name);
  if (col) {
    for (const fk of table.foreignKeys ?? [])
      if (fk.columns.some((c) => c.toLowerCase() === col)) names.push(fk.name);
    for (const check of table.checks ?? [])
      if (check.expression.some((t) => t.value.toLowerCase() === col)) names.push(check.name);
  }
  return names;
}
