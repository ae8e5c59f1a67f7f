/**
 * The permanent errors for a BigQuery table the pipeline created before and finds missing (deleted while the
 * pipeline ran, docs/ARCHITECTURE.md ADR-1510, ADR-1515 and ADR-1516). Recreating it would silently leave out
 * every row written to it before, so the error names the table and the repairs instead: a backfill, or — for
 * a table removed on purpose that should start empty — forgetting the pipeline's record that it existed.
 */
import { SluiceError } from './errors';

/** The repair for a table removed on purpose, common to both messages. */
const ON_PURPOSE =
  'If it was removed on purpose and is to start empty, forget it instead (POST /tables/forget with {"table": "<source table>"}) and retry the failed partitions';

/** A replica or history table the pipeline ensured before, found missing. */
export class MissingTableError extends SluiceError {
  override readonly name = 'MissingTableError';
  /** The table's name in its dataset (the destination `SLUICE_TABLES` names). */
  readonly destination: string;

  constructor(
    readonly target: 'replica' | 'history',
    /** `<dataset>.<table>`, as the message names it. */
    readonly table: string,
    message: string,
    cause?: unknown,
  ) {
    super('permanent', message, cause === undefined ? undefined : { cause });
    this.destination = table.slice(table.lastIndexOf('.') + 1);
  }
}

/** A replica table `<dataset>.<table>` that is missing: backfill it, then retry the failed partitions. */
export function replicaTableMissing(table: string, cause?: unknown): MissingTableError {
  return new MissingTableError(
    'replica',
    table,
    `BigQuery table ${table} was not found: if it was deleted while the pipeline ran, the rows replicated to it went with it. Backfill the source table replicated to it (POST /backfills with "targets": ["replica"]), which recreates and reloads ${table}, then retry the failed partitions (POST /partitions/retry). ${ON_PURPOSE}`,
    cause,
  );
}

/** A history table `<dataset>.<table>` that is missing: its rows exist nowhere else. */
export function historyTableMissing(table: string): MissingTableError {
  return new MissingTableError(
    'history',
    table,
    `BigQuery history table ${table} was not found although the pipeline created it before: if it was deleted while the pipeline ran, the history written to it is lost (it exists nowhere else) and is not recreated empty without a word. To go on, backfill the source table (POST /backfills), which recreates ${table}, then retry the failed partitions (POST /partitions/retry). ${ON_PURPOSE}`,
  );
}

/** The missing-table error in `err` or its causes (a wrapper may carry it), or undefined. */
export function findMissingTable(err: unknown): MissingTableError | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 5 && e instanceof Error; depth++) {
    if (e instanceof MissingTableError) return e;
    e = e.cause;
  }
  return undefined;
}

/** What a missing-table message names: the target and `<dataset>.<table>`. */
export interface NamedMissingTable {
  target: 'replica' | 'history';
  table: string;
}

const NAMED = /BigQuery (history )?table (\S+) was not found/;

/**
 * The table a missing-table message names (anywhere in `message`, which a wrapper may prefix), or undefined.
 * A partition's last error reaches the scheduler as the ledger keeps it, as text: this reads back what
 * {@link replicaTableMissing} and {@link historyTableMissing} wrote.
 */
export function missingTableNamed(message: string): NamedMissingTable | undefined {
  const m = NAMED.exec(message);
  if (!m) return undefined;
  return { target: m[1] ? 'history' : 'replica', table: m[2] as string };
}
