/**
 * Snapshot rows → sink rows. Replica: an UPSERT with sequence number (T, 0, 0), so every stream change after
 * T is larger and wins, and every change at or before T is already in the row. History: one row per key
 * with mod type `SNAPSHOT` and identity `snapshot/<job>/<T ns>/<table>/<key>` — unique by construction (one
 * job reads a key once; two jobs are two snapshots), and written once per partition (ADR-1601).
 */
import { backfillSequenceNumber, type ChangeSequenceNumber } from '../cdc-sequence';
import type { JsonValue } from '../change-record';
import { exactKeyColumn } from '../exact-keys';
import type { HistoryRow } from '../history-rows';
import type { ReplicaUpsert } from '../replica-rows';
import { formatTimestamp, type Timestamp, toBigQueryMicros } from '../timestamp';
import type { WriterValue } from '../value-mapping';

/** The mod type of history rows a backfill writes (the stream's are INSERT, UPDATE and DELETE). */
export const SNAPSHOT_MOD_TYPE = 'SNAPSHOT';

/**
 * The key of a snapshot row, exact: a TIMESTAMP key column is identified by its exact companion (ADR-1402),
 * so keys that differ below a microsecond keep distinct identities. The replica row keeps both columns.
 */
function keyOf(row: Record<string, WriterValue>, primaryKey: string[]): Record<string, JsonValue> {
  const key: Record<string, JsonValue> = {};
  for (const k of primaryKey) key[k] = row[exactKeyColumn(k)] ?? row[k] ?? null;
  return key;
}

/** The last snapshot's sequence number: every row of a job has the same one (computed once, not per row). */
let lastSequence: { at: Timestamp; sequence: ChangeSequenceNumber } | undefined;

function sequenceAt(snapshotTimestamp: Timestamp): ChangeSequenceNumber {
  if (lastSequence?.at !== snapshotTimestamp)
    lastSequence = { at: snapshotTimestamp, sequence: backfillSequenceNumber(snapshotTimestamp) };
  return lastSequence.sequence;
}

/** The replica UPSERT of one snapshot row. */
export function snapshotUpsert(
  table: string,
  primaryKey: string[],
  row: Record<string, WriterValue>,
  snapshotTimestamp: Timestamp,
): ReplicaUpsert {
  return {
    kind: 'upsert',
    table,
    commitTimestamp: snapshotTimestamp,
    key: keyOf(row, primaryKey),
    sequence: sequenceAt(snapshotTimestamp),
    row,
  };
}

/** The history row of one snapshot row. `jobId` names the pseudo-transaction and is part of the identity. */
export function snapshotHistoryRow(
  table: string,
  primaryKey: string[],
  row: Record<string, WriterValue>,
  snapshotTimestamp: Timestamp,
  jobId: string,
): HistoryRow {
  const key = keyOf(row, primaryKey);
  const newValues: Record<string, WriterValue> = {};
  const companions = new Set(primaryKey.map(exactKeyColumn));
  for (const [column, value] of Object.entries(row))
    if (!(column in key) && !companions.has(column)) newValues[column] = value;
  const keys = JSON.stringify(key);
  return {
    commit_timestamp: toBigQueryMicros(snapshotTimestamp).toString(),
    commit_timestamp_ns: formatTimestamp(snapshotTimestamp),
    server_transaction_id: `backfill-${jobId}`,
    record_sequence: '0',
    mod_index: '0',
    change_id: `snapshot/${jobId}/${snapshotTimestamp}/${table}/${keys}`,
    table_name: table,
    mod_type: SNAPSHOT_MOD_TYPE,
    keys,
    new_values: JSON.stringify(newValues),
    old_values: '{}',
    transaction_tag: '',
    number_of_records_in_transaction: '0',
    number_of_partitions_in_transaction: '0',
    value_capture_type: 'NEW_ROW',
    is_system_transaction: false,
    is_last_record_in_transaction_in_partition: false,
  };
}
