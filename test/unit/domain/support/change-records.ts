/** Data-change records as the tests write them: only what a test is about, the rest as a plain insert. */
import type {
  ColumnType,
  DataChangeRecord,
  Mod,
  ModType,
  SpannerType,
  ValueCaptureType,
} from '../../../../shared/domain/change-record';

/** The record's column types, in the order given, with `key` as the primary key. */
export function columnTypesOf(columns: Array<[string, SpannerType]>, key: string): ColumnType[] {
  return columns.map(([name, type], i) => ({
    name,
    type,
    isPrimaryKey: name === key,
    ordinalPosition: i + 1,
  }));
}

/**
 * A record that is the only one of its transaction, in one partition: an untagged user transaction, an
 * INSERT with NEW_ROW capture unless `modType` and `valueCaptureType` say otherwise.
 */
export function soleRecordOfTransaction(p: {
  commitTimestamp: DataChangeRecord['commitTimestamp'];
  recordSequence: string;
  serverTransactionId: string;
  tableName: string;
  columnTypes: ColumnType[];
  mods: Mod[];
  modType?: ModType;
  valueCaptureType?: ValueCaptureType;
}): DataChangeRecord {
  return {
    kind: 'data-change',
    commitTimestamp: p.commitTimestamp,
    recordSequence: p.recordSequence,
    serverTransactionId: p.serverTransactionId,
    isLastRecordInTransactionInPartition: true,
    tableName: p.tableName,
    columnTypes: p.columnTypes,
    mods: p.mods,
    modType: p.modType ?? 'INSERT',
    valueCaptureType: p.valueCaptureType ?? 'NEW_ROW',
    numberOfRecordsInTransaction: 1,
    numberOfPartitionsInTransaction: 1,
    transactionTag: '',
    isSystemTransaction: false,
  };
}
