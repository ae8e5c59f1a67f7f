/**
 * What a batch of data-change records — every record of each of its commit timestamps — becomes in the sinks:
 * replica changes built per (table, key, timestamp) with the full row resolved by a read at exactly the
 * commit timestamp where the stream does not carry it, and one history row per mod, per history table in
 * canonical order (appended exactly once by the window, ADR-1601). Writes resolve only once acknowledged,
 * which is what lets the caller advance the position.
 */

import type { DataChangeRecord } from '../domain/change-record';
import type { PipelineConfig } from '../domain/config';
import { type HistoryRow, historyRowsByDestination } from '../domain/history-rows';
import type { Logger } from '../domain/log';
import {
  buildReplicaChanges,
  mapColumns,
  type ReplicaChange,
  type ReplicaDelete,
  type ReplicaUpsert,
} from '../domain/replica-rows';
import type { ValueIssue } from '../domain/value-mapping';
import type { HistorySink, ReplicaSink } from '../ports/sinks';
import type { SpannerCatalog } from '../ports/spanner-catalog';

/** The ports a batch goes to. */
export interface SinkPorts {
  replica: ReplicaSink;
  history: HistorySink;
  catalog: SpannerCatalog;
}

/** Turns a read-at-commit request into an UPSERT of the row read, or a DELETE when the row did not exist. */
async function resolve(
  catalog: SpannerCatalog,
  change: ReplicaChange,
  issues: ValueIssue[],
): Promise<ReplicaUpsert | ReplicaDelete> {
  if (change.kind !== 'read-at-commit') return change;
  const { columnTypes, reason: _reason, kind: _kind, ...common } = change;
  const columns = columnTypes.map((c) => c.name);
  const row = await catalog.readRowAt(change.table, change.key, columns, change.commitTimestamp);
  if (row) return { ...common, kind: 'upsert', row };
  return { ...common, kind: 'delete', row: mapColumns(change.table, change.key, columnTypes, issues) };
}

/** Writes the replica changes of a batch (every record of each of its commit timestamps); returns the rows. */
export async function writeReplica(
  ports: Pick<SinkPorts, 'replica' | 'catalog'>,
  config: PipelineConfig,
  records: DataChangeRecord[],
  log: Logger,
): Promise<number> {
  const byTable = new Map<string, DataChangeRecord[]>();
  for (const r of records) {
    const list = byTable.get(r.tableName);
    if (list) list.push(r);
    else byTable.set(r.tableName, [r]);
  }
  let written = 0;
  for (const [table, recs] of byTable) {
    // The stream may watch more tables than are replicated: those changes are not wanted.
    const destination = config.tables[table]?.replica;
    if (!destination) continue;
    const { changes, issues } = buildReplicaChanges(recs);
    const rows: Array<ReplicaUpsert | ReplicaDelete> = [];
    for (const c of changes) rows.push(await resolve(ports.catalog, c, issues));
    await ports.replica.write(destination, rows);
    written += rows.length;
    if (issues.length > 0)
      log.warn('replica.value-issues', { table, count: issues.length, first: issues.slice(0, 5) });
  }
  return written;
}

/** The history rows of a batch per history table, in canonical order (`records` must be in it). */
export function historyBatches(
  config: PipelineConfig,
  records: DataChangeRecord[],
): Map<string, HistoryRow[]> {
  return historyRowsByDestination(records, (table) => config.tables[table]?.history);
}
