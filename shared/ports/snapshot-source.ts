/**
 * Snapshot source port, for backfills: one batch read-only transaction at a timestamp T, a per-table query
 * partitioned by Spanner, and each partition read from any process by rejoining the transaction.
 * Transaction and partition handles are opaque strings, so they can be stored in the ledger and put in tasks.
 */
import type { JsonValue } from '../domain/change-record';
import type { TableSchema } from '../domain/information-schema';
import type { Timestamp } from '../domain/timestamp';
import type { WriterValue } from '../domain/value-mapping';

/** An opened snapshot. */
export interface Snapshot {
  /** Opaque handle: rejoin the same batch transaction from anywhere. */
  transaction: string;
  /** T: the snapshot's read timestamp. */
  readTimestamp: Timestamp;
}

/** How to partition one table's query. */
export interface PartitionRequest {
  table: TableSchema;
  /** Columns to read (keys included); the projection of the mapped columns. */
  columns: string[];
  dataBoost: boolean;
  priority: 'low' | 'medium' | 'high';
  /** Upper bound on partitions Spanner should return (a hint, as in the API). */
  maxPartitions?: number;
}

/**
 * Where a snapshot row carries the Spanner wire form of the columns asked for as `keyColumns` (a lookup's
 * join keys): the row's own values are BigQuery's forms, which for a TIMESTAMP, DATE, NUMERIC, FLOAT64 or
 * BYTES column are not the key a point read needs. A symbol, so it is never written as a column.
 */
export const KEY_VALUES: unique symbol = Symbol('sluice.snapshot.keyValues');

/** A snapshot row: writer values, plus the wire form of the requested key columns. */
export type SnapshotRow = Record<string, WriterValue> & { [KEY_VALUES]?: Record<string, JsonValue> };

/** Reads consistent snapshots of tables. Implementations: in-memory, and Spanner batch transactions. */
export interface SnapshotSource {
  /** Opens a batch read-only transaction: strong, or at exactly `readTimestamp`. */
  open(readTimestamp?: Timestamp): Promise<Snapshot>;
  /** Asks Spanner to partition the table's query; returns opaque partition handles. */
  partition(snapshot: Snapshot, request: PartitionRequest): Promise<string[]>;
  /**
   * Streams one partition's rows in the Storage Write JSON writer's value forms; each row also carries, under
   * {@link KEY_VALUES}, the wire form of `keyColumns` (columns of the read projection) when any are asked.
   */
  read(
    snapshot: Snapshot,
    partition: string,
    table: TableSchema,
    signal?: AbortSignal,
    keyColumns?: readonly string[],
  ): AsyncIterable<SnapshotRow>;
  /** Releases the transaction's session when the backfill is done (best effort). */
  close(snapshot: Snapshot): Promise<void>;
}
