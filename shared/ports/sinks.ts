/**
 * Sink ports: the BigQuery replica (CDC upserts and deletes on the `_default` stream) and history (append-only,
 * one row per mod, on write streams with offsets: ADR-1601), plus the completeness table. A write resolves
 * only once BigQuery acknowledged every row — the ledger's position moves only after that.
 */
import type { BigQueryField } from '../domain/bigquery-schema';
import type { HistoryRow } from '../domain/history-rows';
import type { TableSchema } from '../domain/information-schema';
import type { ReplicaDelete, ReplicaUpsert } from '../domain/replica-rows';
import type { Timestamp } from '../domain/timestamp';

/**
 * How a table is ensured. `fresh` looks at the table again, bypassing what the implementation remembers, and
 * recreates it when missing (a backfill: the repair of a deleted table). `existed` says the ledger holds
 * evidence that the pipeline created the table before: then a missing table is not created (unless `fresh`)
 * but refused with a permanent error naming it, since it was deleted and its rows went with it (ADR-1515).
 */
export interface EnsureOptions {
  fresh?: boolean;
  existed?: boolean;
}

/** The current-row replica of source tables. */
export interface ReplicaSink {
  /**
   * Creates the table when missing (primary key, max staleness) and adds columns the source gained. An
   * implementation may remember what it ensured. @throws SluiceError (`permanent`) when the table is missing
   * and `existed` but not `fresh` (see {@link EnsureOptions}).
   */
  ensureTable(
    destination: string,
    source: TableSchema,
    watchedColumns: 'all' | string[],
    options?: EnsureOptions,
  ): Promise<void>;
  /** Writes CDC rows; resolves when every row is acknowledged. */
  write(destination: string, changes: Array<ReplicaUpsert | ReplicaDelete>): Promise<void>;
}

/** A write stream of a history table, as created. */
export interface HistoryStream {
  /** Full name, `projects/…/datasets/…/tables/…/streams/…`. */
  name: string;
  createdAt: Timestamp;
  /** Fingerprint of the table schema the stream was created with (compare with `tableSchema`). */
  schema: string;
}

/** Why a stream takes no more rows. */
export type UnusableReason = 'finalized' | 'gone' | 'schema-refused';

/**
 * BigQuery's answer to {@link HistorySink.appendAt}. Rows of one request are all or nothing, and requests
 * after a refused one are not sent, so everything from `offset` on is unwritten by this call.
 */
export type OffsetAppendResult =
  | { kind: 'appended' }
  /** A row is already at `offset` (written by an earlier attempt): the request starting there was skipped. */
  | { kind: 'already-exists'; offset: number }
  /** `offset` is beyond the stream's end. */
  | { kind: 'out-of-range'; offset: number }
  /** The stream takes no rows any more: finalized, unknown to BigQuery (expired), or of an older schema. */
  | { kind: 'unusable'; reason: UnusableReason; message: string };

/**
 * The append-only history of changes, written on explicit write streams with offsets so that a re-sent row
 * is refused by BigQuery rather than written twice (ADR-1601). Streams are created, finalized and committed
 * by the application, which records their names and offsets in the ledger.
 */
export interface HistorySink {
  /**
   * Creates the table (partitioned by commit timestamp, clustered) when missing; adds missing columns: the
   * history columns, and `enriched` (the columns a source table's lookups bring, NULLABLE). Columns are
   * never dropped, so one source table's call leaves another's enriched columns in place. @throws SluiceError
   * (`permanent`) when the table is missing and `existed` but not `fresh` (see {@link EnsureOptions}).
   */
  ensureTable(
    destination: string,
    enriched?: readonly BigQueryField[],
    options?: EnsureOptions,
  ): Promise<void>;
  /** Fingerprint of the table's current schema; a stream created with another one is to be replaced. */
  tableSchema(destination: string): Promise<string>;
  /**
   * Creates a stream: `committed` rows are visible once acknowledged, `pending` rows once the stream is
   * committed. Each call counts against BigQuery's CreateWriteStream quota.
   */
  createStream(destination: string, type: 'committed' | 'pending'): Promise<HistoryStream>;
  /**
   * Appends `rows` at offsets `offset`, `offset + 1`, … of `stream` (split into requests as size requires);
   * resolves once every request was acknowledged, or with the answer to the first one that was not.
   * Rejects on any other failure (retryable or not: the caller re-sends, and the offsets make that safe).
   */
  appendAt(
    destination: string,
    stream: string,
    offset: number,
    rows: HistoryRow[],
  ): Promise<OffsetAppendResult>;
  /** Finalizes a stream (nothing can be appended after); its row count, or null when BigQuery does not know it. */
  finalizeStream(destination: string, stream: string): Promise<number | null>;
  /**
   * Commits a finalized `pending` stream: its rows become visible at once. A stream committed before counts
   * as committed; `gone` when BigQuery does not know the stream (a pending stream must be committed within a
   * day of its creation).
   */
  commitStream(destination: string, stream: string): Promise<'committed' | 'gone'>;
  /** Closes this instance's connections to `streams` (another instance may write to them next). */
  releaseStreams(streams: string[]): void;
}

/** Per configured target table (replica and history alike), the watermark up to which it is complete. */
export interface CompletenessSink {
  record(entries: Array<{ sourceTable: string; destination: string; watermark: Timestamp }>): Promise<void>;
}
