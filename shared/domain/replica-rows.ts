/**
 * Data-change records → replica changes: UPSERT with the full row, DELETE with the key, or — when the record
 * alone cannot give the full row — a request to read the row at exactly the commit timestamp.
 *
 * All mods of one commit timestamp on one key are decided together, never one by one: two transactions may
 * commit at the same timestamp on disjoint columns of one row, their record sequences are not comparable,
 * and BigQuery would otherwise keep whichever image had the larger sequence number, losing the other's
 * columns. The reader only stops at timestamp boundaries and a key's changes come from one partition, so
 * every mod of (table, key, timestamp) is in the batch this function sees. See docs/ARCHITECTURE.md.
 */
import { type ChangeSequenceNumber, encodeChangeSequenceNumber } from './cdc-sequence';
import {
  type ColumnType,
  capturesFullRow,
  compareRecordSequence,
  type DataChangeRecord,
  type JsonValue,
  type Mod,
} from './change-record';
import { DecodeError } from './client-values';
import { addExactKeys } from './exact-keys';
import type { Timestamp } from './timestamp';
import { toWriterValue, type ValueIssue, type WriterValue } from './value-mapping';

interface Common {
  table: string;
  commitTimestamp: Timestamp;
  /** Key as it appeared in the mod (JSON values). */
  key: Record<string, JsonValue>;
  sequence: ChangeSequenceNumber;
}

/** Write the full row. */
export interface ReplicaUpsert extends Common {
  kind: 'upsert';
  row: Record<string, WriterValue>;
}

/** Delete the key (the row carries only the key columns). */
export interface ReplicaDelete extends Common {
  kind: 'delete';
  row: Record<string, WriterValue>;
}

/**
 * The full row is not in the records: read `table` at `key` as of exactly `commitTimestamp` and write it
 * with `sequence` (UPSERT if found, DELETE if not).
 */
export interface ReplicaReadAtCommit extends Common {
  kind: 'read-at-commit';
  /**
   * `capture-type`: the record holds only changed columns; `concurrent-transactions`: several transactions
   * changed the key at this timestamp; `uncarried-columns`: the table has replicated columns the stream
   * never carries (stored generated columns).
   */
  reason: 'capture-type' | 'concurrent-transactions' | 'uncarried-columns';
  columnTypes: ColumnType[];
}

/** What {@link buildReplicaChanges} needs to know about the table beyond the records. */
export interface ReplicaOptions {
  /** Columns left out of the replica (hidden, not-stored generated): dropped from rows, never an error. */
  ignored?: ReadonlySet<string>;
  /** The stream never carries some replicated columns: every upsert is read at its commit timestamp. */
  readAtCommit?: boolean;
}

/** What the replica needs for one key at one commit timestamp. */
export type ReplicaChange = ReplicaUpsert | ReplicaDelete | ReplicaReadAtCommit;

interface Entry {
  record: DataChangeRecord;
  mod: Mod;
  modIndex: number;
}

/** Canonical text of a key, independent of property order. */
function keyText(key: Record<string, JsonValue>): string {
  const names = Object.keys(key);
  if (names.length > 1) names.sort();
  return JSON.stringify(names.map((k) => [k, key[k]]));
}

function compareEntries(a: Entry, b: Entry): number {
  return compareRecordSequence(a.record.recordSequence, b.record.recordSequence) || a.modIndex - b.modIndex;
}

/** Column name → type of a record's `column_types`, built once per array (a record's mods share it). */
const typesByColumns = new WeakMap<ColumnType[], Map<string, ColumnType['type']>>();

function columnTypeMap(columnTypes: ColumnType[]): Map<string, ColumnType['type']> {
  let types = typesByColumns.get(columnTypes);
  if (!types) {
    types = new Map(columnTypes.map((c) => [c.name, c.type]));
    typesByColumns.set(columnTypes, types);
  }
  return types;
}

/** Maps named JSON values through the record's column types into `row` (later names overwrite). */
function mapColumnsInto(
  row: Record<string, WriterValue>,
  table: string,
  values: Record<string, JsonValue>,
  columnTypes: ColumnType[],
  issues: ValueIssue[],
  ignored?: ReadonlySet<string>,
): Record<string, WriterValue> {
  const types = columnTypeMap(columnTypes);
  for (const name in values) {
    if (ignored?.has(name)) continue;
    const type = types.get(name);
    if (!type) throw new DecodeError(`${table}.${name}`, 'column is not in the record column_types');
    row[name] = toWriterValue(`${table}.${name}`, type, values[name] as JsonValue, issues);
  }
  return row;
}

/** Maps named JSON values through the record's column types. */
export function mapColumns(
  table: string,
  values: Record<string, JsonValue>,
  columnTypes: ColumnType[],
  issues: ValueIssue[],
): Record<string, WriterValue> {
  return mapColumnsInto({}, table, values, columnTypes, issues);
}

/** Non-key values of concurrent NEW_ROW_AND_OLD_VALUES mods: each transaction's changed columns win. */
function mergeChangedColumns(entries: Entry[]): Record<string, JsonValue> | undefined {
  if (
    !entries.every(
      (e) => e.record.valueCaptureType === 'NEW_ROW_AND_OLD_VALUES' && e.record.modType === 'UPDATE',
    )
  ) {
    return undefined;
  }
  const merged: Record<string, JsonValue> = { ...entries[0]!.mod.newValues };
  for (const e of entries) {
    for (const column of Object.keys(e.mod.oldValues)) merged[column] = e.mod.newValues[column] ?? null;
  }
  return merged;
}

function decide(entries: Entry[], issues: ValueIssue[], options: ReplicaOptions): ReplicaChange {
  const { ignored } = options;
  // Almost every group is one mod: no copy, sort or transaction set for it.
  const sorted = entries.length === 1 ? entries : [...entries].sort(compareEntries);
  const last = sorted[sorted.length - 1]!;
  const { record, mod } = last;
  const common: Common = {
    table: record.tableName,
    commitTimestamp: record.commitTimestamp,
    key: mod.keys,
    sequence: encodeChangeSequenceNumber({
      commitTimestamp: record.commitTimestamp,
      recordSequence: record.recordSequence,
      modIndex: last.modIndex,
    }),
  };
  // The key's columns, with the exact companions of its TIMESTAMP columns (ADR-1402).
  const keyRow = () =>
    addExactKeys(
      mapColumnsInto({}, record.tableName, mod.keys, record.columnTypes, issues, ignored),
      mod.keys,
      columnTypeMap(record.columnTypes),
    );
  const concurrent = entries.length > 1 && new Set(entries.map((e) => e.record.serverTransactionId)).size > 1;
  if (concurrent) {
    const merged = mergeChangedColumns(sorted);
    if (!merged)
      return {
        ...common,
        kind: 'read-at-commit',
        reason: 'concurrent-transactions',
        columnTypes: record.columnTypes,
      };
    if (options.readAtCommit) {
      const reason = 'uncarried-columns';
      return { ...common, kind: 'read-at-commit', reason, columnTypes: record.columnTypes };
    }
    return {
      ...common,
      kind: 'upsert',
      row: mapColumnsInto(keyRow(), record.tableName, merged, record.columnTypes, issues, ignored),
    };
  }
  if (record.modType === 'DELETE') return { ...common, kind: 'delete', row: keyRow() };
  if (!capturesFullRow(record.valueCaptureType)) {
    return { ...common, kind: 'read-at-commit', reason: 'capture-type', columnTypes: record.columnTypes };
  }
  if (options.readAtCommit) {
    return {
      ...common,
      kind: 'read-at-commit',
      reason: 'uncarried-columns',
      columnTypes: record.columnTypes,
    };
  }
  return {
    ...common,
    kind: 'upsert',
    row: mapColumnsInto(keyRow(), record.tableName, mod.newValues, record.columnTypes, issues, ignored),
  };
}

/**
 * Builds one replica change per (table, key, commit timestamp) from the data-change records of a window,
 * in commit-timestamp order. The sequence number is that of the key's last mod at that timestamp
 * (highest record sequence, then mod index), so a re-run of the same window yields identical rows.
 * Values BigQuery cannot hold are reported in `issues`. The capture type is each record's own: a record
 * holds the full row only under `NEW_ROW` / `NEW_ROW_AND_OLD_VALUES`; otherwise the row is read at commit.
 */
export function buildReplicaChanges(
  records: DataChangeRecord[],
  options: ReplicaOptions = {},
): {
  changes: ReplicaChange[];
  issues: ValueIssue[];
} {
  const groups = new Map<string, Entry[]>();
  for (const record of records) {
    record.mods.forEach((mod, modIndex) => {
      const id = `${record.commitTimestamp}\u0000${record.tableName}\u0000${keyText(mod.keys)}`;
      const group = groups.get(id);
      if (group) group.push({ record, mod, modIndex });
      else groups.set(id, [{ record, mod, modIndex }]);
    });
  }
  const issues: ValueIssue[] = [];
  const changes = [...groups.values()].map((entries) => decide(entries, issues, options));
  changes.sort((a, b) =>
    a.commitTimestamp < b.commitTimestamp ? -1 : a.commitTimestamp > b.commitTimestamp ? 1 : 0,
  );
  return { changes, issues };
}

/** The JSON-writer row of an UPSERT or DELETE, with BigQuery's CDC pseudo-columns. */
export function replicaWriterRow(change: ReplicaUpsert | ReplicaDelete): Record<string, WriterValue> {
  return {
    ...change.row,
    _CHANGE_TYPE: change.kind === 'upsert' ? 'UPSERT' : 'DELETE',
    _CHANGE_SEQUENCE_NUMBER: change.sequence,
  };
}
