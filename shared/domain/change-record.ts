/**
 * Typed models of the three change-stream record kinds (immutable key-range mode).
 * Decoders from the client's row shapes live in `change-record-decode.ts`.
 */
import type { Timestamp } from './timestamp';

/** Database dialect, as INFORMATION_SCHEMA.DATABASE_OPTIONS names it. */
export type Dialect = 'GOOGLE_STANDARD_SQL' | 'POSTGRESQL';

/** `mod_type` of a data-change record. */
export type ModType = 'INSERT' | 'UPDATE' | 'DELETE';

/** Every `mod_type`. */
export const MOD_TYPES: readonly ModType[] = ['INSERT', 'UPDATE', 'DELETE'];

/** `value_capture_type` of a change stream. */
export type ValueCaptureType = 'OLD_AND_NEW_VALUES' | 'NEW_ROW' | 'NEW_VALUES' | 'NEW_ROW_AND_OLD_VALUES';

/** Every `value_capture_type`. */
export const VALUE_CAPTURE_TYPES: readonly ValueCaptureType[] = [
  'OLD_AND_NEW_VALUES',
  'NEW_ROW',
  'NEW_VALUES',
  'NEW_ROW_AND_OLD_VALUES',
];

/** Capture types whose `new_values` hold the full row, so a replica UPSERT needs no read. */
export function capturesFullRow(type: ValueCaptureType): boolean {
  return type === 'NEW_ROW' || type === 'NEW_ROW_AND_OLD_VALUES';
}

/** A JSON value as it appears in mods (keys / new values / old values). */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** The Spanner type of a column, as the `type` JSON of `column_types` describes it. */
export interface SpannerType {
  code: string;
  arrayElementType?: SpannerType;
  /** `PG_NUMERIC`, `PG_JSONB`, `PG_OID`, … in the PostgreSQL dialect. */
  typeAnnotation?: string;
  /** Fully qualified name of PROTO / ENUM columns. */
  protoTypeFqn?: string;
}

/** One entry of `column_types`. */
export interface ColumnType {
  name: string;
  type: SpannerType;
  isPrimaryKey: boolean;
  ordinalPosition: number;
}

/** One entry of `mods`: keys, and non-key values as the capture type provides them. */
export interface Mod {
  keys: Record<string, JsonValue>;
  newValues: Record<string, JsonValue>;
  oldValues: Record<string, JsonValue>;
}

/** A data-change record: one table, one mod type, one or more mods of one transaction. */
export interface DataChangeRecord {
  kind: 'data-change';
  commitTimestamp: Timestamp;
  /** Digits; compare numerically (see `compareRecordSequence`). */
  recordSequence: string;
  serverTransactionId: string;
  isLastRecordInTransactionInPartition: boolean;
  tableName: string;
  columnTypes: ColumnType[];
  mods: Mod[];
  modType: ModType;
  valueCaptureType: ValueCaptureType;
  numberOfRecordsInTransaction: number;
  numberOfPartitionsInTransaction: number;
  transactionTag: string;
  isSystemTransaction: boolean;
}

/** A heartbeat: every record of the partition at or before `timestamp` has been returned. */
export interface HeartbeatRecord {
  kind: 'heartbeat';
  timestamp: Timestamp;
}

/** One child partition announced by a child-partitions record. */
export interface ChildPartition {
  token: string;
  /** Empty for partitions returned by the initial (NULL token) query. */
  parentPartitionTokens: string[];
}

/** Ends a partition (or, from the initial query, lists the first partitions). */
export interface ChildPartitionsRecord {
  kind: 'child-partitions';
  startTimestamp: Timestamp;
  recordSequence: string;
  childPartitions: ChildPartition[];
}

/** Any record a change-stream query yields. */
export type ChangeRecord = DataChangeRecord | HeartbeatRecord | ChildPartitionsRecord;

/** The timestamp a record stands at in its partition's order. */
export function recordTimestamp(record: ChangeRecord): Timestamp {
  switch (record.kind) {
    case 'data-change':
      return record.commitTimestamp;
    case 'heartbeat':
      return record.timestamp;
    case 'child-partitions':
      return record.startTimestamp;
  }
}

/** Numeric comparison of two `record_sequence` strings (they are digit strings of any width). */
export function compareRecordSequence(a: string, b: string): -1 | 0 | 1 {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
