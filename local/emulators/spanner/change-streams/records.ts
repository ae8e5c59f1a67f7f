/**
 * Turns a committed transaction into data change records for one stream: which columns each mod carries per
 * value capture type, grouping of consecutive mods (same table, mod type and column set) per partition,
 * `record_sequence`, and the transaction-wide counts.
 */
import type { CommitEvent, RowChange, TableInfo } from '../hooks';
import { encodeValue, typeToJson } from './encoding';
import type { DataChangeRecord, JsonValue, ModEntry, StreamDefinition, ValueCaptureType } from './model';
import { sequenceString } from './model';
import type { Partition } from './partitions';

/** Non-key columns of `table` the stream tracks (in table order), or undefined when it tracks none of it. */
export function trackedColumns(stream: StreamDefinition, table: TableInfo): string[] | undefined {
  const fc = stream.forClause;
  if (!fc) return undefined;
  // Generated columns are never tracked unless they are key columns (which every record carries anyway).
  const nonKey = table.columns
    .filter((c) => !table.primaryKey.includes(c.name) && !c.generated)
    .sort((a, b) => a.ordinalPosition - b.ordinalPosition)
    .map((c) => c.name);
  if (fc.all) return nonKey;
  const entry = fc.tables.find((t) => t.table.toLowerCase() === table.name.toLowerCase());
  if (!entry) return undefined;
  if (entry.columns === null) return nonKey;
  const wanted = new Set(entry.columns.map((c) => c.toLowerCase()));
  return nonKey.filter((c) => wanted.has(c.toLowerCase()));
}

/** A mod before grouping: its record-level shape plus its JSON. */
interface PendingMod {
  table: TableInfo;
  modType: RowChange['modType'];
  /** Non-key columns listed in column_types (and the group key). */
  columns: string[];
  mod: ModEntry;
  keyText: string;
}

function pick(
  row: Record<string, unknown> | null,
  table: TableInfo,
  columns: string[],
): ModEntry['newValues'] {
  const out: ModEntry['newValues'] = {};
  for (const name of columns) {
    const col = table.columns.find((c) => c.name === name);
    if (col) out[name] = encodeValue((row?.[name] ?? null) as never, col.type);
  }
  return out;
}

/** Which non-key columns go into column_types / new_values / old_values for one row change. */
function shape(vct: ValueCaptureType, change: RowChange, tracked: string[]) {
  const written = tracked.filter((c) => change.writtenColumns.includes(c));
  const fullNew = vct === 'NEW_ROW' || vct === 'NEW_ROW_AND_OLD_VALUES';
  const withOld = vct === 'OLD_AND_NEW_VALUES' || vct === 'NEW_ROW_AND_OLD_VALUES';
  switch (change.modType) {
    case 'INSERT':
      return { columns: tracked, newCols: tracked, oldCols: [] };
    case 'DELETE':
      return { columns: tracked, newCols: [], oldCols: withOld ? tracked : [] };
    default:
      return {
        columns: fullNew ? tracked : written,
        newCols: fullNew ? tracked : written,
        oldCols: withOld ? written : [],
        skip: written.length === 0,
      };
  }
}

function toPendingMod(
  stream: StreamDefinition,
  change: RowChange,
  event: CommitEvent,
): PendingMod | undefined {
  const o = stream.options;
  if (change.modType === 'INSERT' && o.exclude_insert) return undefined;
  if (change.modType === 'UPDATE' && o.exclude_update) return undefined;
  if (change.modType === 'DELETE' && o.exclude_delete) return undefined;
  const table = event.schema.table(change.table);
  if (!table) return undefined;
  const tracked = trackedColumns(stream, table);
  if (!tracked) return undefined;
  const s = shape(o.value_capture_type ?? 'OLD_AND_NEW_VALUES', change, tracked);
  if ('skip' in s && s.skip) return undefined;
  const keys = pick(change.keys, table, table.primaryKey);
  const keyText = JSON.stringify(table.primaryKey.map((k) => change.keys[k] ?? null));
  return {
    table,
    modType: change.modType,
    columns: s.columns,
    mod: {
      keys,
      newValues: pick(change.newRow, table, s.newCols),
      oldValues: pick(change.oldRow, table, s.oldCols),
    },
    keyText,
  };
}

function newRecord(p: PendingMod, stream: StreamDefinition, event: CommitEvent, txId: string, seq: number) {
  const listed = new Set([...p.table.primaryKey, ...p.columns]);
  const record: DataChangeRecord = {
    commitTimestampNs: event.commitTimestampNs,
    recordSequence: sequenceString(seq),
    serverTransactionId: txId,
    isLastRecordInTransactionInPartition: false,
    tableName: p.table.name,
    columnTypes: p.table.columns
      .filter((c) => listed.has(c.name))
      .sort((a, b) => a.ordinalPosition - b.ordinalPosition)
      .map((c) => ({
        name: c.name,
        type: typeToJson(c.type) as JsonValue,
        isPrimaryKey: p.table.primaryKey.includes(c.name),
        ordinalPosition: c.ordinalPosition,
      })),
    mods: [p.mod],
    modType: p.modType,
    valueCaptureType: stream.options.value_capture_type ?? 'OLD_AND_NEW_VALUES',
    numberOfRecordsInTransaction: 0,
    numberOfPartitionsInTransaction: 0,
    transactionTag: event.transactionTag,
    isSystemTransaction: false,
  };
  return record;
}

/**
 * A record takes no more mods once their JSON reaches this size: a large transaction becomes several records
 * (as in the service, whose records also stay well under its 100 MiB message limit). One mod is never split.
 */
export const RECORD_MODS_BYTES = 1024 * 1024;

function modBytes(mod: ModEntry): number {
  return (
    JSON.stringify(mod.keys).length +
    JSON.stringify(mod.newValues).length +
    JSON.stringify(mod.oldValues).length
  );
}

/**
 * Builds the stream's records for `event`, each assigned to the partition `ownerOf` names for its mods'
 * key. Returns them grouped by partition, in record_sequence order.
 */
export function buildRecords(
  stream: StreamDefinition,
  event: CommitEvent,
  txId: string,
  ownerOf: (table: string, keyText: string) => Partition,
): Map<Partition, DataChangeRecord[]> {
  const byPartition = new Map<Partition, DataChangeRecord[]>();
  const openGroup = new Map<Partition, { key: string; bytes: number }>();
  let seq = 0;
  for (const change of event.changes) {
    const p = toPendingMod(stream, change, event);
    if (!p) continue;
    const partition = ownerOf(p.table.name, p.keyText);
    const groupKey = JSON.stringify([p.table.name, p.modType, p.columns]);
    const list = byPartition.get(partition) ?? [];
    const last = list[list.length - 1];
    const open = openGroup.get(partition);
    const bytes = modBytes(p.mod);
    if (last && open?.key === groupKey && open.bytes + bytes <= RECORD_MODS_BYTES) {
      last.mods.push(p.mod);
      open.bytes += bytes;
    } else {
      list.push(newRecord(p, stream, event, txId, seq++));
      openGroup.set(partition, { key: groupKey, bytes });
    }
    byPartition.set(partition, list);
  }
  for (const list of byPartition.values()) {
    for (const r of list) {
      r.numberOfRecordsInTransaction = seq;
      r.numberOfPartitionsInTransaction = byPartition.size;
    }
    const last = list[list.length - 1];
    if (last) last.isLastRecordInTransactionInPartition = true;
  }
  return byPartition;
}
