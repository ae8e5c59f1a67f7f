/** Which source columns a replica table carries (pure: shared by the BigQuery and in-memory sinks). */
import type { TableColumn, TableSchema } from '../../domain/information-schema';

/** The key plus the watched columns, in ordinal order; every column when the stream watches the table whole. */
export function replicatedColumns(source: TableSchema, watched: 'all' | string[]): TableColumn[] {
  if (watched === 'all') return source.columns;
  const keep = new Set([...watched, ...source.primaryKey]);
  return source.columns.filter((c) => keep.has(c.name));
}
