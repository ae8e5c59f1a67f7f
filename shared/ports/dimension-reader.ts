/**
 * Dimension reader port: point reads of a dimension table by primary key, for enrichment. One call reads a
 * key set at one timestamp (or the latest data), so an enriched window costs one read per dimension table
 * and commit timestamp, never one round trip per row.
 */
import type { JsonValue } from '../domain/change-record';
import type { Timestamp } from '../domain/timestamp';
import type { WriterValue } from '../domain/value-mapping';

/** Keys as primary-key values in the table's declared order (Spanner's wire forms: INT64 as text, BYTES base64). */
export type KeyValues = JsonValue[];

/** Reads rows by primary key. Implementations: in-memory, and Spanner. */
export interface DimensionReader {
  /**
   * The rows of `table` with `keys` as of exactly `at` (`latest`: a strong read), limited to `columns`
   * (keys included), in the order of `keys`; null where no row has that key. A failed read throws the
   * client's error unchanged, so the caller can tell the codes it retries.
   */
  read(
    table: string,
    keys: KeyValues[],
    columns: string[],
    at: Timestamp | 'latest',
  ): Promise<Array<Record<string, WriterValue> | null>>;
}
