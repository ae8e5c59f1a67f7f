/**
 * Decoders from the rows a change-stream query returns through the Spanner Node client to the typed records
 * of `change-record.ts`: (a) a GoogleSQL `ChangeRecord` row (ARRAY<STRUCT<…>>) with or without `json: true`,
 * (b) a PostgreSQL JSONB object (a `PGJsonb`, its parsed value, or JSON text).
 */
import {
  type ChangeRecord,
  type ChildPartitionsRecord,
  type ColumnType,
  type DataChangeRecord,
  type HeartbeatRecord,
  MOD_TYPES,
  type Mod,
  type ModType,
  VALUE_CAPTURE_TYPES,
  type ValueCaptureType,
} from './change-record';
import {
  DecodeError,
  describeValue,
  readArray,
  readBool,
  readCount,
  readJsonObject,
  readOptionalString,
  readString,
  readTimestamp,
  structFields,
} from './client-values';
import { parseTypeJson } from './spanner-types';

export { DecodeError } from './client-values';

const RECORD_KEYS = ['data_change_record', 'heartbeat_record', 'child_partitions_record'] as const;

function readRecordSequence(value: unknown, path: string): string {
  const text = readString(value, path);
  if (!/^\d+$/.test(text))
    throw new DecodeError(path, `expected a digit string, saw ${describeValue(value)}`);
  return text;
}

function readEnum<T extends string>(value: unknown, allowed: readonly T[], path: string): T {
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw new DecodeError(path, `expected one of ${allowed.join(', ')}, saw ${describeValue(value)}`);
}

function decodeColumnType(value: unknown, path: string, table: string): ColumnType {
  const f = structFields(value, path);
  const name = readString(f['name'], `${path}.name`);
  // The path names the table and column, so an unknown type says where it is.
  const typePath = `${path}.type (column ${table}.${name})`;
  return {
    name,
    type: parseTypeJson(readJsonObject(f['type'], typePath), typePath),
    isPrimaryKey: readBool(f['is_primary_key'], `${path}.is_primary_key`),
    ordinalPosition: readCount(f['ordinal_position'], `${path}.ordinal_position`),
  };
}

function decodeMod(value: unknown, path: string): Mod {
  const f = structFields(value, path);
  return {
    keys: readJsonObject(f['keys'], `${path}.keys`),
    newValues: readJsonObject(f['new_values'], `${path}.new_values`),
    oldValues: readJsonObject(f['old_values'], `${path}.old_values`),
  };
}

function decodeDataChange(value: unknown, path: string): DataChangeRecord {
  const f = structFields(value, path);
  const tableName = readString(f['table_name'], `${path}.table_name`);
  return {
    kind: 'data-change',
    commitTimestamp: readTimestamp(f['commit_timestamp'], `${path}.commit_timestamp`),
    recordSequence: readRecordSequence(f['record_sequence'], `${path}.record_sequence`),
    serverTransactionId: readString(f['server_transaction_id'], `${path}.server_transaction_id`),
    isLastRecordInTransactionInPartition: readBool(
      f['is_last_record_in_transaction_in_partition'],
      `${path}.is_last_record_in_transaction_in_partition`,
    ),
    tableName,
    columnTypes: readArray(f['column_types'], `${path}.column_types`).map((c, i) =>
      decodeColumnType(c, `${path}.column_types[${i}]`, tableName),
    ),
    mods: readArray(f['mods'], `${path}.mods`).map((m, i) => decodeMod(m, `${path}.mods[${i}]`)),
    modType: readEnum<ModType>(f['mod_type'], MOD_TYPES, `${path}.mod_type`),
    valueCaptureType: readEnum<ValueCaptureType>(
      f['value_capture_type'],
      VALUE_CAPTURE_TYPES,
      `${path}.value_capture_type`,
    ),
    numberOfRecordsInTransaction: readCount(
      f['number_of_records_in_transaction'],
      `${path}.number_of_records_in_transaction`,
    ),
    numberOfPartitionsInTransaction: readCount(
      f['number_of_partitions_in_transaction'],
      `${path}.number_of_partitions_in_transaction`,
    ),
    transactionTag: readOptionalString(f['transaction_tag'], `${path}.transaction_tag`),
    isSystemTransaction: readBool(f['is_system_transaction'], `${path}.is_system_transaction`),
  };
}

function decodeHeartbeat(value: unknown, path: string): HeartbeatRecord {
  const f = structFields(value, path);
  return { kind: 'heartbeat', timestamp: readTimestamp(f['timestamp'], `${path}.timestamp`) };
}

function decodeChildPartitions(value: unknown, path: string): ChildPartitionsRecord {
  const f = structFields(value, path);
  const children = readArray(f['child_partitions'], `${path}.child_partitions`).map((c, i) => {
    const p = `${path}.child_partitions[${i}]`;
    const cf = structFields(c, p);
    // The initial (NULL token) query reports parents as [NULL] (docs) or [] (emulator): both mean "none".
    const parents = readArray(cf['parent_partition_tokens'], `${p}.parent_partition_tokens`)
      .filter((t) => t !== null)
      .map((t, j) => readString(t, `${p}.parent_partition_tokens[${j}]`));
    return { token: readString(cf['token'], `${p}.token`), parentPartitionTokens: parents };
  });
  return {
    kind: 'child-partitions',
    startTimestamp: readTimestamp(f['start_timestamp'], `${path}.start_timestamp`),
    recordSequence: readRecordSequence(f['record_sequence'], `${path}.record_sequence`),
    childPartitions: children,
  };
}

const DECODERS = {
  data_change_record: decodeDataChange,
  heartbeat_record: decodeHeartbeat,
  child_partitions_record: decodeChildPartitions,
} as const;

/** One element of the GoogleSQL `ChangeRecord` array: three arrays, exactly one of which is non-empty. */
function decodeGoogleSqlElement(value: unknown, path: string): ChangeRecord[] {
  const f = structFields(value, path);
  const records = RECORD_KEYS.flatMap((key) =>
    readArray(f[key], `${path}.${key}`).map((r, i) => DECODERS[key](r, `${path}.${key}[${i}]`)),
  );
  if (records.length === 0) {
    throw new DecodeError(
      path,
      `unknown change record shape: no record in fields [${Object.keys(f).join(', ')}]`,
    );
  }
  return records;
}

/** Column 0 of a row: an array of `{name, value}` (default) or a plain object (`json: true`). */
function firstColumn(row: unknown, path: string): unknown {
  if (Array.isArray(row)) {
    const first = row[0] as unknown;
    if (typeof first === 'object' && first !== null && 'value' in first) return first.value;
  } else if (typeof row === 'object' && row !== null) {
    const values = Object.values(row);
    if (values.length > 0) return values[0];
  }
  throw new DecodeError(path, `expected a result row with one column, saw ${describeValue(row)}`);
}

/**
 * Decodes one GoogleSQL result row (`SELECT ChangeRecord FROM READ_<stream>(…)`) into its records, in
 * order. Accepts every shape the client produces: default rows (Struct, `Int`, `PreciseDate`), and
 * `json: true` rows with or without `wrapNumbers` / `wrapStructs`.
 * @throws DecodeError naming the field and what was seen.
 */
export function decodeGoogleSqlRow(row: unknown): ChangeRecord[] {
  const column = firstColumn(row, 'row');
  return readArray(column, 'ChangeRecord').flatMap((element, i) =>
    decodeGoogleSqlElement(element, `ChangeRecord[${i}]`),
  );
}

/** Unwraps a `PGJsonb` (its `.value`) or parses JSON text; a plain record object passes through. */
function jsonbObject(value: unknown, path: string): Record<string, unknown> {
  let v = value;
  if (typeof v === 'string') v = readJsonObject(v, path);
  if (typeof v === 'object' && v !== null && 'value' in v) {
    const obj = v;
    if (!RECORD_KEYS.some((k) => k in obj)) v = obj.value;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw new DecodeError(path, `expected a JSONB object, saw ${describeValue(value)}`);
  }
  return v as Record<string, unknown>;
}

/**
 * Decodes one PostgreSQL-dialect record: an object with exactly one of `data_change_record`,
 * `heartbeat_record`, `child_partitions_record`.
 * @throws DecodeError naming the keys seen when the shape is unknown.
 */
export function decodePostgresRecord(value: unknown): ChangeRecord {
  const obj = jsonbObject(value, 'record');
  const present = RECORD_KEYS.filter((k) => obj[k] !== undefined && obj[k] !== null);
  const [key] = present;
  if (present.length !== 1 || key === undefined) {
    throw new DecodeError(
      'record',
      `unknown change record shape: expected exactly one of ${RECORD_KEYS.join(', ')}, saw keys [${Object.keys(obj).join(', ')}]`,
    );
  }
  return DECODERS[key](obj[key], `record.${key}`);
}

/** Decodes one PostgreSQL result row (`SELECT * FROM "spanner"."read_json_<stream>"(…)`), reading column 0. */
export function decodePostgresRow(row: unknown): ChangeRecord {
  return decodePostgresRecord(firstColumn(row, 'row'));
}
