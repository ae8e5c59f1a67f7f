/**
 * The shape of one source table in the status object: written by each tick, read back by the markers as
 * evidence that a table existed (ADR-1516).
 */

/** One source table in the status. */
export interface TableStatus {
  source: string;
  replica: string | null;
  history: string | null;
  /** Replicated columns (key included); 0 when the table is not replicated. */
  columns: number;
  /**
   * `replicating`; `not-replicated` (watched, but `SLUICE_TABLES` leaves it out); `dropped` (gone from
   * Spanner, its BigQuery tables kept); `failing` (its BigQuery tables could not be made ready: see `reason`).
   */
  state: 'replicating' | 'not-replicated' | 'dropped' | 'failing';
  reason?: string;
}
