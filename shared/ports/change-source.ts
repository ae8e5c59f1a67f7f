/**
 * Change source port: one bounded change-stream query on one partition (a window), as decoded records in the
 * partition's commit-timestamp order. Implementations: in-memory (scripted records) and Spanner.
 */
import type { ChangeRecord } from '../domain/change-record';
import type { Timestamp } from '../domain/timestamp';

/** One window query. `partitionToken` null is the initial query (it returns child-partitions records only). */
export interface ChangeQuery {
  partitionToken: string | null;
  /** Inclusive. */
  from: Timestamp;
  /** Inclusive; null reads until the partition ends (never used by readers: windows are bounded). */
  to: Timestamp | null;
  heartbeatMs: number;
}

/** Reads change records. Aborting `signal` ends the iteration cleanly (the query is cancelled). */
export interface ChangeSource {
  read(query: ChangeQuery, signal?: AbortSignal): AsyncIterable<ChangeRecord>;
}
