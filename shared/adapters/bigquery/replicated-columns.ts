/** Which source columns a replica table carries, and its schema (pure: shared by both replica sinks). */
import { replicaTableSchema } from '../../domain/bigquery-schema';
import type { TableColumn, TableSchema } from '../../domain/information-schema';
import { planReplica } from '../../domain/replica-plan';

/**
 * The replica plan's columns, in ordinal order: the key, the watched columns, and (when the table is watched
 * whole) its stored generated columns; hidden and not-stored generated columns are left out.
 */
export function replicatedColumns(source: TableSchema, watched: 'all' | string[]): TableColumn[] {
  return [...planReplica(source, watched).columns.values()];
}

/** The schema of `source`'s replica table: its {@link replicatedColumns} and its primary key. */
export function replicaSchemaOf(source: TableSchema, watched: 'all' | string[]) {
  return replicaTableSchema({
    name: source.name,
    columns: replicatedColumns(source, watched),
    primaryKey: source.primaryKey,
  });
}
