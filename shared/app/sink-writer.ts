/**
 * Writes a batch of data-change records — every record of each of its commit timestamps — to the configured
 * sinks: replica changes built per (table, key, timestamp) with the full row resolved by a read at exactly the
 * commit timestamp where the stream does not carry it, and one history row per mod. Resolves only once every
 * sink acknowledged, which is what lets the caller advance the position (DESIGN §4.1).
 */

import type { DataChangeRecord } from '../domain/change-record';
import type { PipelineConfig } from '../domain/config';
import { historyRows } from '../domain/history-rows';
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

/** Writes one batch; returns how many replica and history rows were written. */
export async function writeBatch(
  ports: SinkPorts,
  config: PipelineConfig,
  records: DataChangeRecord[],
  batchKey: string,
  log: Logger,
): Promise<{ replicaRows: number; historyRows: number }> {
  const byTable = new Map<string, DataChangeRecord[]>();
  for (const r of records) {
    const list = byTable.get(r.tableName);
    if (list) list.push(r);
    else byTable.set(r.tableName, [r]);
  }
  let replicaRows = 0;
  let historyCount = 0;
  for (const [table, recs] of byTable) {
    const targets = config.tables[table];
    // The stream may watch more tables than are replicated: those changes are not wanted.
    if (!targets) continue;
    if (targets.replica) {
      const { changes, issues } = buildReplicaChanges(recs);
      const rows: Array<ReplicaUpsert | ReplicaDelete> = [];
      for (const c of changes) rows.push(await resolve(ports.catalog, c, issues));
      await ports.replica.write(targets.replica, rows);
      replicaRows += rows.length;
      if (issues.length > 0)
        log.warn('replica.value-issues', { table, count: issues.length, first: issues.slice(0, 5) });
    }
    if (targets.history) {
      const rows = recs.flatMap(historyRows);
      await ports.history.append(targets.history, rows, `${batchKey}/${table}`);
      historyCount += rows.length;
    }
  }
  return { replicaRows, historyRows: historyCount };
}
