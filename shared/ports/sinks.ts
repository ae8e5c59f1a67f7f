/**
 * Sink ports: the BigQuery replica (CDC upserts and deletes on the `_default` stream) and history (append-only,
 * one row per mod), plus the completeness table. A write resolves only once BigQuery acknowledged every row —
 * the ledger's position moves only after that (DESIGN §4.1).
 */
import type { HistoryRow } from '../domain/history-rows';
import type { TableSchema } from '../domain/information-schema';
import type { ReplicaDelete, ReplicaUpsert } from '../domain/replica-rows';
import type { Timestamp } from '../domain/timestamp';

/** The current-row replica of source tables. */
export interface ReplicaSink {
  /** Creates the table when missing (primary key, max staleness) and adds columns the source gained. */
  ensureTable(destination: string, source: TableSchema, watchedColumns: 'all' | string[]): Promise<void>;
  /** Writes CDC rows; resolves when every row is acknowledged. */
  write(destination: string, changes: Array<ReplicaUpsert | ReplicaDelete>): Promise<void>;
}

/** The append-only history of changes. */
export interface HistorySink {
  /** Creates the table (partitioned by commit timestamp, clustered) and its dedup view when missing. */
  ensureTable(destination: string): Promise<void>;
  /**
   * Appends rows; resolves when every row is acknowledged. `batchKey` names the batch deterministically (for
   * example window + flush number), so an implementation can make a re-sent batch a no-op.
   */
  append(destination: string, rows: HistoryRow[], batchKey: string): Promise<void>;
}

/** Per source table, the watermark up to which its replica is complete. */
export interface CompletenessSink {
  record(entries: Array<{ sourceTable: string; destination: string; watermark: Timestamp }>): Promise<void>;
}
