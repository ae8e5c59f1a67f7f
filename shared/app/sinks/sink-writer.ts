/**
 * What a batch of data-change records — every record of each of its commit timestamps — becomes in the sinks:
 * replica changes built per (table, key, timestamp) with the full row read at exactly the commit timestamp
 * where the record does not carry it (one read per table and timestamp over its keys), and one history row
 * per mod, per history table in canonical order (appended exactly once by the window, ADR-1601). Before a
 * table's rows are written its plan covers every column its records (and reads) carry: drift re-plans the
 * table and gives BigQuery the new columns first (ADR-1301). Writes resolve only once acknowledged, which is
 * what lets the caller advance the position.
 */

import type { BadRecordPolicy, RejectedRecord } from '../../domain/bad-records';
import type { DataChangeRecord } from '../../domain/change-record';
import { SluiceError } from '../../domain/errors';
import { type HistoryRow, historyRowsByDestination } from '../../domain/history-rows';
import type { Logger } from '../../domain/log';
import { columnDrift } from '../../domain/replica-plan';
import type { HistorySink } from '../../ports/sinks';
import type { EnrichedMods, Enrichments } from '../enrichment';
import type { ReplicatedTable, TableRegistry } from '../tables';
import type { ReplicaPorts } from './replica-reads';
import { writeReplicaTable } from './replica-table';

export { type ReplicaPorts, resolveChanges } from './replica-reads';

/** The ports a batch goes to. */
export interface SinkPorts extends ReplicaPorts {
  history: HistorySink;
  /** Applies the tables' lookups (absent: a table with lookups cannot be written, loudly). */
  enrichments?: Enrichments;
}

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
