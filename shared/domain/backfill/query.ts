/**
 * The partitioned query of a table: a projection of the mapped columns, quoted for the dialect. Names come
 * from INFORMATION_SCHEMA and are still checked, because they are spliced into SQL text.
 */
import type { Dialect } from '../change-record';

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

function quote(dialect: Dialect, name: string): string {
  if (!NAME.test(name)) throw new Error(`invalid identifier ${JSON.stringify(name)}`);
  return dialect === 'POSTGRESQL' ? `"${name}"` : `\`${name}\``;
}

/** A table's name quoted part by part: a named schema's `sch.T` is two quoted identifiers joined by a dot. */
function quoteTable(dialect: Dialect, table: string): string {
  const parts = table.split('.');
  if (parts.length > 2) throw new Error(`invalid table name ${JSON.stringify(table)}`);
  return parts.map((p) => quote(dialect, p)).join('.');
}

/** `SELECT <columns> FROM <table>` — root-partitionable, as PartitionQuery requires. */
export function snapshotQuerySql(dialect: Dialect, table: string, columns: string[]): string {
  if (columns.length === 0) throw new Error(`no columns to read from ${table}`);
  return `SELECT ${columns.map((c) => quote(dialect, c)).join(', ')} FROM ${quoteTable(dialect, table)}`;
}
