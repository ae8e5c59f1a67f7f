/** Which source columns a replica table carries (pure: shared by the BigQuery and in-memory sinks). */
import type { TableColumn, TableSchema } from '../../domain/information-schema';
import { planReplica } from '../../domain/replica-plan';

/**
 * The replica plan's columns, in ordinal order: the key, the watched columns, and (when the table is watched
 * whole) its stored generated columns; hidden and not-stored generated columns are left out.
 */
export function replicatedColumns(source: TableSchema, watched: 'all' | string[]): TableColumn[] {
  return [...planReplica(source, watched).columns.values()];
}
