/**
 * What the pipeline reads from Spanner besides the change stream: the database dialect, the stream's scope
 * and options (INFORMATION_SCHEMA), table schemas (now, or as of a timestamp), and rows at an exact commit
 * timestamp (for replica rows whose full image the stream does not carry).
 */
import type { Dialect, JsonValue, SpannerType } from '../domain/change-record';
import type { ChangeStreamOptions, ChangeStreamScope, TableSchema } from '../domain/information-schema';
import type { KeyColumn } from '../domain/row-reads';
import type { Timestamp } from '../domain/timestamp';

/** How a schema is read. */
export interface SchemaReadOptions {
  /**
   * Read INFORMATION_SCHEMA as of this timestamp (the schema version a record was committed under). A
   * timestamp older than the database's version retention falls back to the current schema.
   */
  at?: Timestamp;
  /** Bypass any cache (after drift was detected). */
  fresh?: boolean;
}

/** Rows read at a timestamp, in the mod JSON form, with the columns (and types) the read returned. */
export interface RowsAt {
  columns: Array<{ name: string; type: SpannerType }>;
  rows: Array<Record<string, JsonValue>>;
}

/** Read access to the source database's catalog and rows. */
export interface SpannerCatalog {
  dialect(): Promise<Dialect>;
  /** The stream's watched tables and columns, or undefined when the stream does not exist. */
  streamScope(stream: string): Promise<ChangeStreamScope | undefined>;
  /** The stream's options, read fresh (they are checked in every reader window). */
  streamOptions(stream: string): Promise<ChangeStreamOptions>;
  /** Columns and primary key of a table. */
  tableSchema(table: string, options?: SchemaReadOptions): Promise<TableSchema>;
  /** Every user table's columns and key (two queries for the whole database). */
  tableSchemas(options?: SchemaReadOptions): Promise<TableSchema[]>;
  /**
   * The rows of `table` whose keys are in `keys`, as of exactly `at`: every column the table had then (not
   * only those the caller knows), in the form a change-stream mod carries values. Keys without a row at `at`
   * are simply absent. One query per batch of keys.
   */
  readRowsAt(
    table: string,
    keyColumns: readonly KeyColumn[],
    keys: ReadonlyArray<Record<string, JsonValue>>,
    at: Timestamp,
  ): Promise<RowsAt>;
}
