/**
 * Renders change-stream rows in wire form: GoogleSQL as one `ChangeRecord ARRAY<STRUCT<…>>` column (JSON
 * fields as JSON text, INT64 as decimal strings, timestamps as RFC 3339), PostgreSQL as one JSONB column
 * holding an object with exactly one of `data_change_record`, `heartbeat_record`, `child_partitions_record`.
 */
import { formatTimestamp, fromNanos } from '../../../../shared/domain/timestamp';
import type { SpannerTypeJson, WireValue } from '../hooks';
import type { ChangeRow, DataChangeRecord, JsonValue } from './model';

const ts = (ns: bigint): string => formatTimestamp(fromNanos(ns));

const scalar = (code: string): SpannerTypeJson => ({ code });
const arrayOf = (element: SpannerTypeJson): SpannerTypeJson => ({ code: 'ARRAY', arrayElementType: element });
const struct = (fields: Array<[string, SpannerTypeJson]>): SpannerTypeJson => ({
  code: 'STRUCT',
  structType: { fields: fields.map(([name, type]) => ({ name, type })) },
});

/** The GoogleSQL `ChangeRecord` type, field by field in the service's order. */
export const CHANGE_RECORD_TYPE: SpannerTypeJson = arrayOf(
  struct([
    [
      'data_change_record',
      arrayOf(
        struct([
          ['commit_timestamp', scalar('TIMESTAMP')],
          ['record_sequence', scalar('STRING')],
          ['server_transaction_id', scalar('STRING')],
          ['is_last_record_in_transaction_in_partition', scalar('BOOL')],
          ['table_name', scalar('STRING')],
          [
            'column_types',
            arrayOf(
              struct([
                ['name', scalar('STRING')],
                ['type', scalar('JSON')],
                ['is_primary_key', scalar('BOOL')],
                ['ordinal_position', scalar('INT64')],
              ]),
            ),
          ],
          [
            'mods',
            arrayOf(
              struct([
                ['keys', scalar('JSON')],
                ['new_values', scalar('JSON')],
                ['old_values', scalar('JSON')],
              ]),
            ),
          ],
          ['mod_type', scalar('STRING')],
          ['value_capture_type', scalar('STRING')],
          ['number_of_records_in_transaction', scalar('INT64')],
          ['number_of_partitions_in_transaction', scalar('INT64')],
          ['transaction_tag', scalar('STRING')],
          ['is_system_transaction', scalar('BOOL')],
        ]),
      ),
    ],
    ['heartbeat_record', arrayOf(struct([['timestamp', scalar('TIMESTAMP')]]))],
    [
      'child_partitions_record',
      arrayOf(
        struct([
          ['start_timestamp', scalar('TIMESTAMP')],
          ['record_sequence', scalar('STRING')],
          [
            'child_partitions',
            arrayOf(
              struct([
                ['token', scalar('STRING')],
                ['parent_partition_tokens', arrayOf(scalar('STRING'))],
              ]),
            ),
          ],
        ]),
      ),
    ],
  ]),
);

/** Result metadata of a change-stream query: `ChangeRecord` (GoogleSQL) or the TVF's name as JSONB (PG). */
export function queryMetadata(
  pg: boolean,
  tvfName: string,
): { rowType: { fields: Array<{ name: string; type: SpannerTypeJson }> } } {
  const field = pg
    ? { name: tvfName, type: { code: 'JSON', typeAnnotation: 'PG_JSONB' } }
    : { name: 'ChangeRecord', type: CHANGE_RECORD_TYPE };
  return { rowType: { fields: [field] } };
}

function dataStruct(r: DataChangeRecord): WireValue[] {
  return [
    ts(r.commitTimestampNs),
    r.recordSequence,
    r.serverTransactionId,
    r.isLastRecordInTransactionInPartition,
    r.tableName,
    r.columnTypes.map((c) => [c.name, JSON.stringify(c.type), c.isPrimaryKey, String(c.ordinalPosition)]),
    r.mods.map((m) => [JSON.stringify(m.keys), JSON.stringify(m.newValues), JSON.stringify(m.oldValues)]),
    r.modType,
    r.valueCaptureType,
    String(r.numberOfRecordsInTransaction),
    String(r.numberOfPartitionsInTransaction),
    r.transactionTag,
    r.isSystemTransaction,
  ];
}

/** One GoogleSQL row: `[ChangeRecord]`, where ChangeRecord holds one STRUCT of three arrays. */
export function toGoogleSqlRow(row: ChangeRow): WireValue[] {
  const data: WireValue[] = row.kind === 'data' ? [dataStruct(row.record)] : [];
  const heartbeat: WireValue[] = row.kind === 'heartbeat' ? [[ts(row.timestampNs)]] : [];
  const child: WireValue[] =
    row.kind === 'child'
      ? [
          [
            ts(row.startTimestampNs),
            row.recordSequence,
            row.children.map((c) => [c.token, [...c.parentPartitionTokens]]),
          ],
        ]
      : [];
  return [[[data, heartbeat, child]]];
}

function dataObject(r: DataChangeRecord): { [key: string]: JsonValue } {
  return {
    commit_timestamp: ts(r.commitTimestampNs),
    record_sequence: r.recordSequence,
    server_transaction_id: r.serverTransactionId,
    is_last_record_in_transaction_in_partition: r.isLastRecordInTransactionInPartition,
    table_name: r.tableName,
    column_types: r.columnTypes.map((c) => ({
      name: c.name,
      type: c.type,
      is_primary_key: c.isPrimaryKey,
      ordinal_position: c.ordinalPosition,
    })),
    mods: r.mods.map((m) => ({ keys: m.keys, new_values: m.newValues, old_values: m.oldValues })),
    mod_type: r.modType,
    value_capture_type: r.valueCaptureType,
    number_of_records_in_transaction: r.numberOfRecordsInTransaction,
    number_of_partitions_in_transaction: r.numberOfPartitionsInTransaction,
    transaction_tag: r.transactionTag,
    is_system_transaction: r.isSystemTransaction,
  };
}

/** One PostgreSQL row: `[jsonb text]`. */
export function toPostgresRow(row: ChangeRow): WireValue[] {
  let value: JsonValue;
  if (row.kind === 'data') value = { data_change_record: dataObject(row.record) };
  else if (row.kind === 'heartbeat') value = { heartbeat_record: { timestamp: ts(row.timestampNs) } };
  else {
    value = {
      child_partitions_record: {
        start_timestamp: ts(row.startTimestampNs),
        record_sequence: row.recordSequence,
        child_partitions: row.children.map((c) => ({
          token: c.token,
          parent_partition_tokens: [...c.parentPartitionTokens],
        })),
      },
    };
  }
  return [JSON.stringify(value)];
}
