/**
 * History rows no AppendRows request can carry (ADR-2113). BigQuery refuses a request over 20 MB
 * (bigquery-storage-write.md §1.5, §2.5: `AppendRows request too large: <n> limit 20971520`) and a row is
 * never split, so such a row would fail its window on every attempt. It is the record's own fault, so it
 * follows the bad-record policy like a row the replica refuses: `fail` stops the partition naming the record,
 * `dead-letter` leaves the row out of the append and sets the record aside. Which rows are left out is a pure
 * function of the records, so a re-read window leaves out the same rows and every other row keeps its offset
 * (exactly once, ADR-1601).
 */
import { BadRecordError, type BadRecordPolicy, type RejectedRecord } from '../../domain/bad-records';
import type { DataChangeRecord } from '../../domain/change-record';
import {
  type HistoryRow,
  historyRowBytes,
  historyRowBytesBound,
  MAX_HISTORY_ROW_BYTES,
} from '../../domain/history-rows';
import { keyValue } from '../../domain/log-values';
import { UnrepresentableError } from '../../domain/record-errors';

/** The batch's history without the rows too large to append, and the records they belong to. */
export interface HistoryAfterLimits {
  history: Map<string, HistoryRow[]>;
  rejected: RejectedRecord[];
}

/** The record a history row was built from. */
export type RecordOfRow = (row: HistoryRow) => DataChangeRecord;

/**
 * Takes every history row over {@link MAX_HISTORY_ROW_BYTES} out of `history`: the batch of `records` (a
 * window's), or of the records `recordOf` gives (a backfill's snapshot rows, ADR-2114).
 * @throws BadRecordError under `fail`, for the first such row's record.
 */
export function withoutOversizedHistory(
  history: Map<string, HistoryRow[]>,
  records: DataChangeRecord[] | RecordOfRow,
  policy: BadRecordPolicy,
): HistoryAfterLimits {
  const recordOfRow = typeof records === 'function' ? records : (row: HistoryRow) => recordOf(records, row);
  const rejected = new Map<DataChangeRecord, RejectedRecord>();
  const out = new Map<string, HistoryRow[]>();
  for (const [destination, rows] of history) {
    const kept: HistoryRow[] = [];
    for (const row of rows) {
      // Almost every row is far below the limit, which its fields' lengths show without building its JSON.
      const bytes = historyRowBytesBound(row) <= MAX_HISTORY_ROW_BYTES ? 0 : historyRowBytes(row);
      if (bytes <= MAX_HISTORY_ROW_BYTES) {
        kept.push(row);
        continue;
      }
      const record = recordOfRow(row);
      // Marked as a key: a backfill's change id holds the row's key (ADR-2307 redacts it in logs).
      const error = new UnrepresentableError(
        'row-too-large',
        destination,
        `the history row of change ${keyValue(row.change_id)} is ${bytes} bytes, more than the ${MAX_HISTORY_ROW_BYTES} an AppendRows request may carry; it is not written`,
      );
      const column = largestColumn(row);
      const r: RejectedRecord = { record, error, ...(column ? { column } : {}) };
      if (policy === 'fail') throw new BadRecordError(r);
      if (!rejected.has(record)) rejected.set(record, r);
    }
    out.set(destination, kept);
  }
  return { history: out, rejected: [...rejected.values()] };
}

/** The source column whose new (or old) value is the largest: what made the row too large. */
function largestColumn(row: HistoryRow): string | undefined {
  let best: { name: string; size: number } | undefined;
  for (const text of [row.new_values, row.old_values]) {
    let values: unknown;
    try {
      values = JSON.parse(text);
    } catch {
      continue;
    }
    if (typeof values !== 'object' || values === null) continue;
    for (const [name, v] of Object.entries(values)) {
      const size = typeof v === 'string' ? v.length : JSON.stringify(v ?? null).length;
      if (!best || size > best.size) best = { name, size };
    }
  }
  return best?.name;
}

/** The record a history row was built from (same table, transaction and record sequence). */
function recordOf(records: DataChangeRecord[], row: HistoryRow): DataChangeRecord {
  const found = records.find(
    (r) =>
      r.tableName === row.table_name &&
      r.serverTransactionId === row.server_transaction_id &&
      BigInt(r.recordSequence).toString() === row.record_sequence,
  );
  if (!found) throw new Error(`history row ${row.change_id} belongs to no record of its batch`);
  return found;
}

/**
 * The records of `more` not already in `rejected` (one letter per record, whichever sink refused it).
 */
export function mergeRejected(rejected: RejectedRecord[], more: RejectedRecord[]): RejectedRecord[] {
  const seen = new Set(rejected.map((r) => r.record));
  return [...rejected, ...more.filter((r) => !seen.has(r.record))];
}
