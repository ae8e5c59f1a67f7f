/**
 * The permanent errors for a BigQuery table the pipeline created before and finds missing (deleted while the
 * pipeline ran, docs/ARCHITECTURE.md ADR-1510 and ADR-1515). Recreating it would silently leave out every row
 * written to it before, so the error names the table and the repair instead.
 */
import { SluiceError } from './errors';

/** A replica table `<dataset>.<table>` that is missing: backfill it, then retry the failed partitions. */
export function replicaTableMissing(table: string, cause?: unknown): SluiceError {
  return new SluiceError(
    'permanent',
    `BigQuery table ${table} was not found: if it was deleted while the pipeline ran, the rows replicated to it went with it. Backfill the source table replicated to it (POST /backfills with "targets": ["replica"]), which recreates and reloads ${table}, then retry the failed partitions (POST /partitions/retry)`,
    cause === undefined ? undefined : { cause },
  );
}

/** A history table `<dataset>.<table>` that is missing: its rows exist nowhere else. */
export function historyTableMissing(table: string): SluiceError {
  return new SluiceError(
    'permanent',
    `BigQuery history table ${table} was not found although the pipeline created it before: if it was deleted while the pipeline ran, the history written to it is lost (it exists nowhere else) and is not recreated empty without a word. To go on, backfill the source table (POST /backfills), which recreates ${table}, then retry the failed partitions (POST /partitions/retry)`,
  );
}
