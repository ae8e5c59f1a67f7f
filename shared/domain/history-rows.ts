/**
 * Data-change records → history rows: one row per mod, identified by (server transaction id, record
 * sequence, mod index), with keys and values kept as the exact JSON the stream delivered.
 */

import type { BigQueryField } from './bigquery-schema';
import type { DataChangeRecord } from './change-record';
import { formatTimestamp, toBigQueryMicros } from './timestamp';
import type { WriterValue } from './value-mapping';

/**
 * Largest history row appended, measured on its JSON in UTF-8: under BigQuery's 20 MB AppendRows request
 * limit (bigquery-storage-write.md §2.5) with room for the request's own fields, as the replica's writer keeps.
 */
export const MAX_HISTORY_ROW_BYTES = 19 * 1024 * 1024;

/** A history row's size as {@link MAX_HISTORY_ROW_BYTES} measures it: the UTF-8 bytes of its JSON text. */
export function historyRowBytes(row: HistoryRow): number {
  return Buffer.byteLength(JSON.stringify(row), 'utf8');
}

/**
 * At least {@link historyRowBytes}, from the fields' lengths alone, without building the JSON text. In JSON a
 * UTF-16 unit of a string takes at most 6 bytes of UTF-8 (a `\u00XX` or lone-surrogate escape; otherwise at
 * most 3), a boolean or null at most 5, a number at most 24 (`-1.7976931348623157e+308`); each member adds its
 * quoted name, a colon and a comma. Infinity for a value of any other kind, so the caller measures exactly.
 */
export function historyRowBytesBound(row: HistoryRow): number {
  let bytes = 2;
  for (const name in row) {
    const value = (row as unknown as Record<string, unknown>)[name];
    bytes += 6 * name.length + 4;
    if (typeof value === 'string') bytes += 6 * value.length + 2;
    else if (typeof value === 'boolean' || value === null) bytes += 5;
    else if (typeof value === 'number') bytes += 24;
    else if (value !== undefined) return Number.POSITIVE_INFINITY;
  }
  return bytes;
}

/** One history row in the JSON writer's form (TIMESTAMP in microseconds, INT64 as decimal strings). */
export interface HistoryRow {
  /** Partitioning column: commit timestamp in microseconds. */
  commit_timestamp: string;
  /** The exact commit timestamp, RFC 3339 with nine fractional digits (BigQuery TIMESTAMP keeps microseconds). */
  commit_timestamp_ns: string;
  server_transaction_id: string;
  record_sequence: string;
  mod_index: string;
  /**
   * Identity: `<server_transaction_id>/<record_sequence>/<mod_index>`, unique per mod (ADR-1602); backfill
   * rows: `snapshot/<job>/<T ns>/<table>/<key>`.
   */
  change_id: string;
  table_name: string;
  mod_type: string;
  keys: string;
  new_values: string;
  old_values: string;
  transaction_tag: string;
  number_of_records_in_transaction: string;
  number_of_partitions_in_transaction: string;
  value_capture_type: string;
  is_system_transaction: boolean;
  is_last_record_in_transaction_in_partition: boolean;
}

/** Identity of a mod, stable across re-deliveries. The record sequence is normalised (leading zeros dropped). */
export function changeId(serverTransactionId: string, recordSequence: string, modIndex: number): string {
  return `${serverTransactionId}/${BigInt(recordSequence)}/${modIndex}`;
}

/**
 * Records in the order their history rows are appended: commit timestamp, then server transaction id, then
 * record sequence (numerically). A record delivered twice (same timestamp, transaction and sequence) is kept
 * once. The order is a function of the records alone, not of how they arrived or were batched, so the rows
 * after a position are the same sequence however a window is re-read and flushed (ADR-1601).
 */
export function canonicalOrder(records: readonly DataChangeRecord[]): DataChangeRecord[] {
  const keyed = records.map((r) => ({ r, seq: BigInt(r.recordSequence) }));
  keyed.sort((a, b) => {
    if (a.r.commitTimestamp !== b.r.commitTimestamp)
      return a.r.commitTimestamp < b.r.commitTimestamp ? -1 : 1;
    if (a.r.serverTransactionId !== b.r.serverTransactionId)
      return a.r.serverTransactionId < b.r.serverTransactionId ? -1 : 1;
    return a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0;
  });
  const out: DataChangeRecord[] = [];
  for (let i = 0; i < keyed.length; i++) {
    const { r, seq } = keyed[i]!;
    const prev = keyed[i - 1];
    const repeat =
      prev !== undefined &&
      prev.r.commitTimestamp === r.commitTimestamp &&
      prev.r.serverTransactionId === r.serverTransactionId &&
      prev.seq === seq;
    if (!repeat) out.push(r);
  }
  return out;
}

/**
 * History rows per destination table, in canonical record order (`records` must already be in it): one
 * sequence per history table, whatever source tables feed it. `destinationOf` maps a source table to its
 * history table (undefined: no history wanted).
 */
export function historyRowsByDestination(
  records: readonly DataChangeRecord[],
  destinationOf: (sourceTable: string) => string | undefined,
  enrichedOf?: (record: DataChangeRecord) => ReadonlyArray<Record<string, WriterValue>> | undefined,
): Map<string, HistoryRow[]> {
  const out = new Map<string, HistoryRow[]>();
  for (const record of records) {
    const destination = destinationOf(record.tableName);
    if (destination === undefined) continue;
    const rows = historyRows(record, enrichedOf?.(record));
    const list = out.get(destination);
    if (list) for (const row of rows) list.push(row);
    else out.set(destination, rows);
  }
  return out;
}

/**
 * The history rows of one record, one per mod, in mod order; `enriched` (one entry per mod) adds the
 * columns the source table's lookups bring.
 */
export function historyRows(
  record: DataChangeRecord,
  enriched?: ReadonlyArray<Record<string, WriterValue>>,
): HistoryRow[] {
  // Everything but the mod's own values is the record's: computed once, not per mod.
  const recordSequence = BigInt(record.recordSequence).toString();
  const commitMicros = toBigQueryMicros(record.commitTimestamp).toString();
  const commitText = formatTimestamp(record.commitTimestamp);
  const idPrefix = `${record.serverTransactionId}/${recordSequence}/`;
  const records = String(record.numberOfRecordsInTransaction);
  const partitions = String(record.numberOfPartitionsInTransaction);
  return record.mods.map((mod, modIndex) => ({
    commit_timestamp: commitMicros,
    commit_timestamp_ns: commitText,
    server_transaction_id: record.serverTransactionId,
    record_sequence: recordSequence,
    mod_index: String(modIndex),
    change_id: `${idPrefix}${modIndex}`,
    table_name: record.tableName,
    mod_type: record.modType,
    keys: JSON.stringify(mod.keys),
    new_values: JSON.stringify(mod.newValues),
    old_values: JSON.stringify(mod.oldValues),
    transaction_tag: record.transactionTag,
    number_of_records_in_transaction: records,
    number_of_partitions_in_transaction: partitions,
    value_capture_type: record.valueCaptureType,
    is_system_transaction: record.isSystemTransaction,
    is_last_record_in_transaction_in_partition: record.isLastRecordInTransactionInPartition,
    ...enriched?.[modIndex],
  }));
}

const f = (
  name: string,
  type: BigQueryField['type'],
  mode: BigQueryField['mode'] = 'REQUIRED',
): BigQueryField => ({
  name,
  type,
  mode,
});

/** Schema of a history table; partition it by day on `commit_timestamp` and cluster by `table_name`. */
export const HISTORY_TABLE_FIELDS: readonly BigQueryField[] = [
  f('commit_timestamp', 'TIMESTAMP'),
  f('commit_timestamp_ns', 'STRING'),
  f('server_transaction_id', 'STRING'),
  f('record_sequence', 'INT64'),
  f('mod_index', 'INT64'),
  f('change_id', 'STRING'),
  f('table_name', 'STRING'),
  f('mod_type', 'STRING'),
  f('keys', 'JSON'),
  f('new_values', 'JSON'),
  f('old_values', 'JSON'),
  f('transaction_tag', 'STRING', 'NULLABLE'),
  f('number_of_records_in_transaction', 'INT64'),
  f('number_of_partitions_in_transaction', 'INT64'),
  f('value_capture_type', 'STRING'),
  f('is_system_transaction', 'BOOL'),
  f('is_last_record_in_transaction_in_partition', 'BOOL'),
];

/** The partitioning and clustering a history table is created with. */
export const HISTORY_TABLE_LAYOUT = {
  timePartitioning: { type: 'DAY', field: 'commit_timestamp' },
  clustering: { fields: ['table_name'] },
} as const;
