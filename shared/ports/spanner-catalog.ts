/**
 * What the pipeline reads from Spanner besides the change stream: the database dialect, the stream's scope
 * and options (INFORMATION_SCHEMA), table schemas, and single rows at an exact timestamp (for replica rows
 * whose full image the stream does not carry).
 */
import type { Dialect, JsonValue } from '../domain/change-record';
import type { ChangeStreamOptions, ChangeStreamScope, TableSchema } from '../domain/information-schema';
import type { Timestamp } from '../domain/timestamp';
import type { WriterValue } from '../domain/value-mapping';

/** Read access to the source database's catalog and rows. */
export interface SpannerCatalog {
  dialect(): Promise<Dialect>;
  /** The stream's watched tables and columns, or undefined when the stream does not exist. */
  streamScope(stream: string): Promise<ChangeStreamScope | undefined>;
  streamOptions(stream: string): Promise<ChangeStreamOptions>;
  /** Columns and primary key of a table. */
  tableSchema(table: string): Promise<TableSchema>;
  /**
   * The row of `table` with `key` as of exactly `at`, in the Storage Write JSON writer's value forms, limited to
   * `columns` (keys included); null when no such row exists at that timestamp.
   */
  readRowAt(
    table: string,
    key: Record<string, JsonValue>,
    columns: string[],
    at: Timestamp,
  ): Promise<Record<string, WriterValue> | null>;
}
