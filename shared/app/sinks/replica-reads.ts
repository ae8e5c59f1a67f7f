/**
 * The rows of replica changes whose records do not hold them: read from Spanner at exactly the commit
 * timestamp (ADR-102), one read per timestamp (several in flight, ADR-3003), a key without a row there
 * becoming a DELETE of the key.
 */
import { isSnapshotTooOld } from '../../domain/backfill/snapshot-errors';
import type { JsonValue } from '../../domain/change-record';
import { SluiceError } from '../../domain/errors';
import { addExactKeys } from '../../domain/exact-keys';
import { columnDrift } from '../../domain/replica-plan';
import type {
  ReplicaChange,
  ReplicaDelete,
  ReplicaReadAtCommit,
  ReplicaUpsert,
} from '../../domain/replica-rows';
import { canonicalKey } from '../../domain/row-reads';
import { formatTimestamp, type Timestamp } from '../../domain/timestamp';
import { toWriterValue, type ValueIssue, type WriterValue } from '../../domain/value-mapping';
import type { ReplicaSink } from '../../ports/sinks';
import type { RowsAt, SpannerCatalog } from '../../ports/spanner-catalog';
import { readAhead } from '../common';
import type { ReplicatedTable, TableRegistry } from '../tables';

/** The ports the replica path uses. */
export interface ReplicaPorts {
  replica: ReplicaSink;
  catalog: SpannerCatalog;
  tables: TableRegistry;
}

/** The permanent error of a read at a commit timestamp the database no longer keeps. */
function readTooOld(table: string, at: Timestamp, cause: unknown): SluiceError {
  return new SluiceError(
    'permanent',
    `the replica rows of ${table} at ${formatTimestamp(at)} must be read at that commit timestamp (the change records do not hold them), but it is older than the database's version_retention_period. Raise the retention (up to 7 days), or give the change stream value_capture_type = 'NEW_ROW' (or 'NEW_ROW_AND_OLD_VALUES') so records carry full rows; then retry the partition`,
    { cause },
  );
}

/** The rows of one timestamp's keys, read at that commit timestamp (the source's name and keys never change). */
async function readAt(ports: ReplicaPorts, table: ReplicatedTable, reads: ReplicaReadAtCommit[]) {
  const at = (reads[0] as ReplicaReadAtCommit).commitTimestamp;
  const keys = reads.map((r) => r.key);
  return ports.catalog.readRowsAt(table.source, table.plan.keys, keys, at).catch((err) => {
    throw isSnapshotTooOld(err) ? readTooOld(table.source, at, err) : err;
  });
}

/** Read rows keyed by their canonical key, mapped to writer values of the replicated columns. */
async function rowsOf(
  ports: ReplicaPorts,
  start: ReplicatedTable,
  rowsAt: RowsAt,
  at: Timestamp,
  issues: ValueIssue[],
): Promise<{ table: ReplicatedTable; rows: Map<string, Record<string, WriterValue>> }> {
  let table = start;
  // The read shows the table's columns at `at`: a column added since the plan was made is not lost.
  const drift = columnDrift(table.plan, rowsAt.columns);
  if (drift.length > 0) table = await ports.tables.refresh(table.source, at, drift);
  // The replicated columns of the read, in its order, each with the path its value problems name.
  const replicated = rowsAt.columns
    .filter((c) => table.plan.columns.has(c.name))
    .map((c) => ({ name: c.name, type: c.type, path: `${table.source}.${c.name}` }));
  const rows = new Map<string, Record<string, WriterValue>>();
  for (const values of rowsAt.rows) {
    const row: Record<string, WriterValue> = {};
    for (const c of replicated)
      row[c.name] = toWriterValue(c.path, c.type, (values[c.name] ?? null) as JsonValue, issues);
    rows.set(canonicalKey(table.plan.keys, values), row);
  }
  return { table, rows };
}

/**
 * The UPSERT / DELETE of every change: read-at-commit requests are grouped by commit timestamp and resolved
 * with one read each, a few in flight at once (a key without a row at that timestamp becomes a DELETE of the key).
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
  // The reads overlap (a few ahead); their rows are used in timestamp order, so a drift is refreshed once.
  await readAhead(
    [...byTimestamp.values()],
    (group) => readAt(ports, table, group),
    async (rowsAt, group) => {
      const out = await rowsOf(
        ports,
        current,
        rowsAt,
        (group[0] as ReplicaReadAtCommit).commitTimestamp,
        issues,
      );
      current = out.table;
      for (const c of group) read.set(c, out.rows.get(canonicalKey(current.plan.keys, c.key)) ?? null);
    },
  );
  const rows = changes.map((c): ReplicaUpsert | ReplicaDelete => {
    if (c.kind !== 'read-at-commit') return c;
    // Named one by one (typed, so a field added to every change is not forgotten): cheaper than a rest copy.
    const common: Omit<ReplicaUpsert, 'kind' | 'row'> = {
      table: c.table,
      commitTimestamp: c.commitTimestamp,
      key: c.key,
      sequence: c.sequence,
    };
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
