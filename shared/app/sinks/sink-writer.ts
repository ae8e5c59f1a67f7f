/**
 * What a batch of data-change records — every record of each of its commit timestamps — becomes in the sinks:
 * replica changes built per (table, key, timestamp) with the full row read at exactly the commit timestamp
 * where the record does not carry it (one read per table and timestamp over its keys), and one history row
 * per mod, per history table in canonical order (appended exactly once by the window, ADR-1601). Before a
 * table's rows are written its plan covers every column its records (and reads) carry: drift re-plans the
 * table and gives BigQuery the new columns first (ADR-1301). Writes resolve only once acknowledged, which is
 * what lets the caller advance the position.
 */

import { isSnapshotTooOld } from '../../domain/backfill/snapshot-errors';
import type { BadRecordPolicy, RejectedRecord } from '../../domain/bad-records';
import type { DataChangeRecord, JsonValue } from '../../domain/change-record';
import { SluiceError } from '../../domain/errors';
import { addExactKeys } from '../../domain/exact-keys';
import { type HistoryRow, historyRowsByDestination } from '../../domain/history-rows';
import type { Logger } from '../../domain/log';
import { columnDrift } from '../../domain/replica-plan';
import {
  buildReplicaChanges,
  type ReplicaChange,
  type ReplicaDelete,
  type ReplicaReadAtCommit,
  type ReplicaUpsert,
} from '../../domain/replica-rows';
import { canonicalKey } from '../../domain/row-reads';
import { formatTimestamp, type Timestamp } from '../../domain/timestamp';
import { toWriterValue, type ValueIssue, type WriterValue } from '../../domain/value-mapping';
import type { HistorySink, ReplicaSink } from '../../ports/sinks';
import type { SpannerCatalog } from '../../ports/spanner-catalog';
import type { EnrichedMods, Enrichments } from '../enrichment';
import type { ReplicatedTable, TableRegistry } from '../tables';
import { writeReplicaTable } from './replica-table';

/** The ports a batch goes to. */
export interface SinkPorts {
  replica: ReplicaSink;
  history: HistorySink;
  catalog: SpannerCatalog;
  tables: TableRegistry;
  /** Applies the tables' lookups (absent: a table with lookups cannot be written, loudly). */
  enrichments?: Enrichments;
}

/** The ports the replica path uses. */
export type ReplicaPorts = Pick<SinkPorts, 'replica' | 'catalog' | 'tables'>;

/**
 * The enriched columns of a batch (every record of each of its commit timestamps): one call of the
 * enrichments per source table with lookups, over all its mods, after its plan follows the records.
 */
export async function enrichBatch(ports: SinkPorts, records: DataChangeRecord[]): Promise<EnrichedMods> {
  const out: EnrichedMods = new Map();
  for (const [name, recs] of byTable(records)) {
    const first = await ports.tables.table(name, (recs[0] as DataChangeRecord).commitTimestamp);
    if (!first || first.lookups.length === 0) continue;
    const table = await followSchema(ports.tables, first, recs);
    if (table.lookups.length === 0) continue;
    if (!ports.enrichments)
      throw new SluiceError('permanent', `table ${name} has lookups but this function cannot apply them`);
    for (const [record, columns] of await ports.enrichments.forRecords(table, recs)) out.set(record, columns);
  }
  return out;
}

/** Brings the table's plan up to every record's columns, re-planning at each drifting record's timestamp. */
export async function followSchema(
  tables: TableRegistry,
  table: ReplicatedTable,
  records: DataChangeRecord[],
): Promise<ReplicatedTable> {
  let current = table;
  for (const record of records) {
    const drift = columnDrift(current.plan, record.columnTypes);
    if (drift.length > 0) current = await tables.refresh(table.source, record.commitTimestamp, drift);
  }
  return current;
}

/** The permanent error of a read at a commit timestamp the database no longer keeps. */
function readTooOld(table: string, at: Timestamp, cause: unknown): SluiceError {
  return new SluiceError(
    'permanent',
    `the replica rows of ${table} at ${formatTimestamp(at)} must be read at that commit timestamp (the change records do not hold them), but it is older than the database's version_retention_period. Raise the retention (up to 7 days), or give the change stream value_capture_type = 'NEW_ROW' (or 'NEW_ROW_AND_OLD_VALUES') so records carry full rows; then retry the partition`,
    { cause },
  );
}

/** Read rows keyed by their canonical key, mapped to writer values of the replicated columns. */
async function readAt(
  ports: ReplicaPorts,
  start: ReplicatedTable,
  reads: ReplicaReadAtCommit[],
  issues: ValueIssue[],
): Promise<{ table: ReplicatedTable; rows: Map<string, Record<string, WriterValue>> }> {
  const at = (reads[0] as ReplicaReadAtCommit).commitTimestamp;
  let table = start;
  const keys = reads.map((r) => r.key);
  const rowsAt = await ports.catalog.readRowsAt(table.source, table.plan.keys, keys, at).catch((err) => {
    throw isSnapshotTooOld(err) ? readTooOld(table.source, at, err) : err;
  });
  // The read shows the table's columns at `at`: a column added since the plan was made is not lost.
  const drift = columnDrift(table.plan, rowsAt.columns);
  if (drift.length > 0) table = await ports.tables.refresh(table.source, at, drift);
  const rows = new Map<string, Record<string, WriterValue>>();
  for (const values of rowsAt.rows) {
    const row: Record<string, WriterValue> = {};
    for (const c of rowsAt.columns) {
      if (!table.plan.columns.has(c.name)) continue;
      const path = `${table.source}.${c.name}`;
      row[c.name] = toWriterValue(path, c.type, (values[c.name] ?? null) as JsonValue, issues);
    }
    rows.set(canonicalKey(table.plan.keys, values), row);
  }
  return { table, rows };
}

/**
 * The UPSERT / DELETE of every change: read-at-commit requests are grouped by commit timestamp and resolved
 * with one read each (a key without a row at that timestamp becomes a DELETE of the key).
 */
export async function resolveChanges(
  ports: ReplicaPorts,
  table: ReplicatedTable,
  changes: ReplicaChange[],
  issues: ValueIssue[],
): Promise<{ table: ReplicatedTable; rows: Array<ReplicaUpsert | ReplicaDelete> }> {
  const byTimestamp = new Map<bigint, ReplicaReadAtCommit[]>();
  for (const c of changes) {
    if (c.kind !== 'read-at-commit') continue;
    const group = byTimestamp.get(c.commitTimestamp);
    if (group) group.push(c);
    else byTimestamp.set(c.commitTimestamp, [c]);
  }
  let current = table;
  const read = new Map<ReplicaReadAtCommit, Record<string, WriterValue> | null>();
  for (const group of byTimestamp.values()) {
    const out = await readAt(ports, current, group, issues);
    current = out.table;
    for (const c of group) read.set(c, out.rows.get(canonicalKey(current.plan.keys, c.key)) ?? null);
  }
  const rows = changes.map((c): ReplicaUpsert | ReplicaDelete => {
    if (c.kind !== 'read-at-commit') return c;
    const { columnTypes, reason: _reason, kind: _kind, ...common } = c;
    const row = read.get(c) ?? null;
    // Either way the row carries the exact companions of TIMESTAMP key columns (ADR-1402).
    if (row) return { ...common, kind: 'upsert', row: addExactKeys(row, c.key, current.plan.keys) };
    const key: Record<string, WriterValue> = {};
    for (const k of current.plan.keys)
      key[k.name] = toWriterValue(
        `${c.table}.${k.name}`,
        k.type,
        (c.key[k.name] ?? null) as JsonValue,
        issues,
      );
    return { ...common, kind: 'delete', row: addExactKeys(key, c.key, current.plan.keys) };
  });
  return { table: current, rows };
}

/** Groups records by source table, in their order. */
function byTable(records: DataChangeRecord[]): Map<string, DataChangeRecord[]> {
  const out = new Map<string, DataChangeRecord[]>();
  for (const r of records) {
    const list = out.get(r.tableName);
    if (list) list.push(r);
    else out.set(r.tableName, [r]);
  }
  return out;
}

/**
 * Writes the replica changes of a batch (every record of each of its commit timestamps), each table's plan
 * brought up to its records' columns first, under the bad-record policy (ADR-1502); returns the rows
 * written and the records set aside (`dead-letter` only).
 */
export async function writeReplica(
  ports: ReplicaPorts,
  records: DataChangeRecord[],
  policy: BadRecordPolicy,
  log: Logger,
  enriched?: EnrichedMods,
): Promise<{ rows: number; rejected: RejectedRecord[] }> {
  let written = 0;
  const rejected: RejectedRecord[] = [];
  for (const [name, recs] of byTable(records)) {
    const first = await ports.tables.table(name, (recs[0] as DataChangeRecord).commitTimestamp);
    // Not replicated (logged once per instance by the registry, listed in the status by the scheduler).
    if (!first?.targets.replica) continue;
    const table = await followSchema(ports.tables, first, recs);
    const out = await writeReplicaTable(ports, table, recs, policy, log, enriched);
    written += out.rows;
    rejected.push(...out.rejected);
  }
  return { rows: written, rejected };
}

/**
 * The history rows of a batch per history table, in canonical order (`records` must be in it). Each source
 * table is looked up in the registry first, so a table seen for the first time (the all-tables form) has its
 * history table created before a stream is opened on it.
 */
export async function historyBatches(
  tables: TableRegistry,
  records: DataChangeRecord[],
  enriched?: EnrichedMods,
): Promise<Map<string, HistoryRow[]>> {
  const destinations = new Map<string, string | undefined>();
  for (const [name, recs] of byTable(records)) {
    const table = await tables.table(name, (recs[0] as DataChangeRecord).commitTimestamp);
    destinations.set(name, table?.targets.history);
  }
  return historyRowsByDestination(
    records,
    (table) => destinations.get(table),
    enriched ? (record) => enriched.get(record) : undefined,
  );
}
