/**
 * Internal model of the change-stream engine: stream definitions, the records a commit produces, and the
 * rows a change-stream query returns before they are rendered in a dialect's wire form.
 */

/** JSON value as it appears inside `keys`, `new_values`, `old_values` and `column_types[].type`. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** The four value capture types of the real service. */
export const VALUE_CAPTURE_TYPES = [
  'OLD_AND_NEW_VALUES',
  'NEW_ROW',
  'NEW_VALUES',
  'NEW_ROW_AND_OLD_VALUES',
] as const;
export type ValueCaptureType = (typeof VALUE_CAPTURE_TYPES)[number];

/** What a stream watches: everything, or a list of tables (each whole, or key columns plus some columns). */
export type ForClause = { all: true } | { all: false; tables: TrackedTable[] };

/** One table entry of a FOR clause; `columns: null` means the whole table (`FOR T`), `[]` keys only. */
export interface TrackedTable {
  table: string;
  columns: string[] | null;
}

/** Options as they were set explicitly (absent = default). */
export interface StreamOptions {
  retention_period?: string;
  value_capture_type?: ValueCaptureType;
  exclude_insert?: boolean;
  exclude_update?: boolean;
  exclude_delete?: boolean;
  exclude_ttl_deletes?: boolean;
  allow_txn_exclusion?: boolean;
}

/** A change stream as defined by DDL. `forClause` undefined: the stream tracks nothing (no FOR clause). */
export interface StreamDefinition {
  name: string;
  forClause: ForClause | undefined;
  options: StreamOptions;
  /** Creation time (ns): the earliest start_timestamp a query may use. */
  createdAtNs: bigint;
}

/** One `column_types` entry. */
export interface ColumnTypeEntry {
  name: string;
  /** `google.spanner.v1.Type` as the service writes it in change records (snake_case keys). */
  type: JsonValue;
  isPrimaryKey: boolean;
  ordinalPosition: number;
}

/** One `mods` entry: JSON objects keyed by column name. */
export interface ModEntry {
  keys: { [column: string]: JsonValue };
  newValues: { [column: string]: JsonValue };
  oldValues: { [column: string]: JsonValue };
}

/** A data change record as stored in its partition. */
export interface DataChangeRecord {
  commitTimestampNs: bigint;
  recordSequence: string;
  serverTransactionId: string;
  isLastRecordInTransactionInPartition: boolean;
  tableName: string;
  columnTypes: ColumnTypeEntry[];
  mods: ModEntry[];
  modType: 'INSERT' | 'UPDATE' | 'DELETE';
  valueCaptureType: ValueCaptureType;
  numberOfRecordsInTransaction: number;
  numberOfPartitionsInTransaction: number;
  transactionTag: string;
  isSystemTransaction: boolean;
}

/** One child of a child-partitions record. */
export interface ChildPartition {
  token: string;
  parentPartitionTokens: string[];
}

/** A row of a change-stream query, before rendering. */
export type ChangeRow =
  | { kind: 'data'; record: DataChangeRecord }
  | { kind: 'heartbeat'; timestampNs: bigint }
  | { kind: 'child'; startTimestampNs: bigint; recordSequence: string; children: ChildPartition[] };

/** Formats a sequence number the way the service does (zero-padded to eight digits). */
export function sequenceString(n: number): string {
  return String(n).padStart(8, '0');
}
