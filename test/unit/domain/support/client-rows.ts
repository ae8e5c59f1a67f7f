/**
 * Produces change-stream rows exactly as `@google-cloud/spanner` hands them to application code, by feeding
 * wire-format PartialResultSets through the client's own `PartialResultStream`. Fixtures are written as
 * logical records (the JSON shape of the docs / PostgreSQL); `toWire` lays them out positionally the way
 * the server encodes the GoogleSQL `ChangeRecord` column (INT64 and JSON as strings, STRUCT as a list).
 */
import { PartialResultStream } from '@google-cloud/spanner/build/src/partial-result-stream';

type WireValue = string | boolean | null | WireValue[];
type SpannerWireType = {
  code: string;
  arrayElementType?: SpannerWireType;
  structType?: { fields: { name: string; type: SpannerWireType }[] };
  typeAnnotation?: string;
};

const t = (code: string): SpannerWireType => ({ code });
const arr = (element: SpannerWireType): SpannerWireType => ({ code: 'ARRAY', arrayElementType: element });
const struct = (fields: [string, SpannerWireType][]): SpannerWireType => ({
  code: 'STRUCT',
  structType: { fields: fields.map(([name, type]) => ({ name, type })) },
});

const COLUMN_TYPES = struct([
  ['name', t('STRING')],
  ['type', t('JSON')],
  ['is_primary_key', t('BOOL')],
  ['ordinal_position', t('INT64')],
]);
const MOD = struct([
  ['keys', t('JSON')],
  ['new_values', t('JSON')],
  ['old_values', t('JSON')],
]);
const DATA_CHANGE = struct([
  ['commit_timestamp', t('TIMESTAMP')],
  ['record_sequence', t('STRING')],
  ['server_transaction_id', t('STRING')],
  ['is_last_record_in_transaction_in_partition', t('BOOL')],
  ['table_name', t('STRING')],
  ['column_types', arr(COLUMN_TYPES)],
  ['mods', arr(MOD)],
  ['mod_type', t('STRING')],
  ['value_capture_type', t('STRING')],
  ['number_of_records_in_transaction', t('INT64')],
  ['number_of_partitions_in_transaction', t('INT64')],
  ['transaction_tag', t('STRING')],
  ['is_system_transaction', t('BOOL')],
]);
const HEARTBEAT = struct([['timestamp', t('TIMESTAMP')]]);
const CHILD = struct([
  ['token', t('STRING')],
  ['parent_partition_tokens', arr(t('STRING'))],
]);
const CHILD_PARTITIONS = struct([
  ['start_timestamp', t('TIMESTAMP')],
  ['record_sequence', t('STRING')],
  ['child_partitions', arr(CHILD)],
]);

/** The GoogleSQL `ChangeRecord` column type, field order as the service declares it. */
export const CHANGE_RECORD_TYPE = arr(
  struct([
    ['data_change_record', arr(DATA_CHANGE)],
    ['heartbeat_record', arr(HEARTBEAT)],
    ['child_partitions_record', arr(CHILD_PARTITIONS)],
  ]),
);

/** Lays a logical value out as the wire encodes a value of `type`. */
export function toWire(value: unknown, type: SpannerWireType): WireValue {
  if (value === null || value === undefined) return null;
  switch (type.code) {
    case 'ARRAY':
      return (value as unknown[]).map((v) => toWire(v, type.arrayElementType!));
    case 'STRUCT':
      return type.structType!.fields.map((f) => toWire((value as Record<string, unknown>)[f.name], f.type));
    case 'JSON':
      return JSON.stringify(value);
    case 'BOOL':
      return value as boolean;
    default:
      return String(value);
  }
}

/** A logical record (`{data_change_record: {...}}` etc.) as one wire `ChangeRecord` value. */
export function googleSqlWireRow(record: Record<string, unknown>): WireValue {
  const element = {
    data_change_record: record['data_change_record'] ? [record['data_change_record']] : [],
    heartbeat_record: record['heartbeat_record'] ? [record['heartbeat_record']] : [],
    child_partitions_record: record['child_partitions_record'] ? [record['child_partitions_record']] : [],
  };
  return toWire([element], CHANGE_RECORD_TYPE);
}

function protoValue(v: WireValue): object {
  if (v === null) return { kind: 'nullValue', nullValue: 'NULL_VALUE' };
  if (typeof v === 'string') return { kind: 'stringValue', stringValue: v };
  if (typeof v === 'boolean') return { kind: 'boolValue', boolValue: v };
  return { kind: 'listValue', listValue: { values: v.map(protoValue) } };
}

/** Client row options under test (`json`, `jsonOptions`) — the same object `database.runStream` takes. */
export type RowOptions = { json?: boolean; jsonOptions?: { wrapNumbers?: boolean; wrapStructs?: boolean } };

/** Runs wire rows of one column through the client's PartialResultStream and returns the rows it emits. */
export async function clientRows(
  column: { name: string; type: SpannerWireType },
  rows: WireValue[],
  options: RowOptions = {},
): Promise<unknown[]> {
  const stream = new PartialResultStream(options);
  const out: unknown[] = [];
  stream.on('data', (row: unknown) => out.push(row));
  const done = new Promise<void>((resolve, reject) => {
    stream.on('end', resolve);
    stream.on('error', reject);
  });
  stream.write({ metadata: { rowType: { fields: [column] } }, values: [], resumeToken: Buffer.alloc(0) });
  rows.forEach((row, i) => {
    stream.write({
      values: [protoValue(row)],
      resumeToken: Buffer.from(String(i)),
      last: i === rows.length - 1,
    });
  });
  if (rows.length === 0) stream.end();
  await done;
  return out;
}

/** GoogleSQL rows for the given logical records, as the client emits them with `options`. */
export function googleSqlClientRows(
  records: Record<string, unknown>[],
  options?: RowOptions,
): Promise<unknown[]> {
  return clientRows(
    { name: 'ChangeRecord', type: CHANGE_RECORD_TYPE },
    records.map(googleSqlWireRow),
    options,
  );
}

/** PostgreSQL rows (one PG_JSONB column named after the function) for logical records. */
export function postgresClientRows(
  records: Record<string, unknown>[],
  options?: RowOptions,
): Promise<unknown[]> {
  const type = { code: 'JSON', typeAnnotation: 'PG_JSONB' };
  return clientRows(
    { name: 'read_json_orders', type },
    records.map((r) => JSON.stringify(r)),
    options,
  );
}
