/**
 * Dimension reader port: point reads of a dimension table by primary key, for enrichment. One call reads a
 * key set at one timestamp (or the latest data), so an enriched window costs one read per dimension table
 * and commit timestamp, never one round trip per row. Each read also returns the column types the read saw
 * (they come with every result), so a dimension column retyped since the lookup was resolved is noticed at
 * the next read, not at the next plan.
 */
import type { JsonValue, SpannerType } from '../domain/change-record';
import type { Timestamp } from '../domain/timestamp';
import type { WriterValue } from '../domain/value-mapping';

/**
 * Keys as primary-key values in the table's declared order, in Spanner's wire form (INT64, NUMERIC,
 * TIMESTAMP, DATE and UUID as text, FLOAT as a number or `"NaN"`, BYTES base64, BOOL a boolean).
 */
export type KeyValues = JsonValue[];

/** What one read returns. */
export interface DimensionRows {
  /** In the order of the requested keys; null where no row has that key. */
  rows: Array<Record<string, WriterValue> | null>;
  /** The type of each column read (keys included), as the read's result describes it; empty if unknown. */
  types: Record<string, SpannerType>;
}

/** Reads rows by primary key. Implementations: in-memory, and Spanner. */
export interface DimensionReader {
  /**
   * The rows of `table` with `keys` as of exactly `at` (`latest`: a strong read), limited to `columns`
   * (keys included). A failed read throws the client's error unchanged, so the caller can tell the codes it
   * retries.
   */
  read(table: string, keys: KeyValues[], columns: string[], at: Timestamp | 'latest'): Promise<DimensionRows>;
}
