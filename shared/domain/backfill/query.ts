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

/** `SELECT <columns> FROM <table>` — root-partitionable, as PartitionQuery requires. */
export function snapshotQuerySql(dialect: Dialect, table: string, columns: string[]): string {
  if (columns.length === 0) throw new Error(`no columns to read from ${table}`);
  return `SELECT ${columns.map((c) => quote(dialect, c)).join(', ')} FROM ${quote(dialect, table)}`;
}
