/**
 * One table's replica changes of a batch, written with the bad-record policy (ADR-1502): a record whose
 * values cannot be mapped, whose row read at its commit timestamp cannot be mapped, or whose rows BigQuery
 * rejects is isolated — found among the batch's records and named — and either fails the window (`fail`:
 * a {@link BadRecordError} naming table, column, key and timestamp) or is handed back to be dead-lettered
 * while the table's other records are written (`dead-letter`). Failures of a service (retryable, or not caused
 * by a record's content) are thrown as they are: they concern the whole window.
 */
import {
  type BadRecordPolicy,
  isRecordFailure,
  type RejectedRecord,
  RowsRejectedError,
} from '../../domain/bad-records';
import type { DataChangeRecord } from '../../domain/change-record';
import { SluiceError } from '../../domain/errors';
import type { Logger } from '../../domain/log';
import { UnrepresentableError } from '../../domain/record-errors';
import {
  buildReplicaChanges,
  type ReplicaChange,
  type ReplicaDelete,
  type ReplicaOptions,
  type ReplicaUpsert,
} from '../../domain/replica-rows';
import type { ValueIssue } from '../../domain/value-mapping';
import type { ReplicaSink } from '../../ports/sinks';
import type { EnrichedMods } from '../enrichment';
import type { ReplicatedTable } from '../tables';
import { enforce, isolatePlanning, keyText, planError, recordsOf, reject } from './replica-isolation';
import { type ReplicaPorts, resolveChanges } from './replica-reads';

/** How one table's write went: rows written, records set aside (only under `dead-letter`). */
export interface ReplicaTableOutcome {
  rows: number;
  rejected: RejectedRecord[];
}

type Row = ReplicaUpsert | ReplicaDelete;

/** Resolves `changes`; the error when they cannot be resolved for a record's fault (thrown otherwise). */
async function tryResolve(
  ports: ReplicaPorts,
  table: ReplicatedTable,
  changes: ReplicaChange[],
  issues: ValueIssue[],
) {
  try {
    return { ok: true as const, ...(await resolveChanges(ports, table, changes, issues)) };
  } catch (err) {
    if (!isRecordFailure(err)) throw err;
    return { ok: false as const, err };
  }
}

/**
 * Resolves every change (rows read at their commit timestamp where the record lacks them); when that fails
 * for a record's fault, each commit timestamp's changes are tried apart, then each change alone, and the
 * records of the failing changes are rejected.
 */
async function resolveAll(
  ports: ReplicaPorts,
  start: ReplicatedTable,
  changes: ReplicaChange[],
  records: DataChangeRecord[],
  issues: ValueIssue[],
): Promise<{ table: ReplicatedTable; rows: Row[]; rejected: RejectedRecord[] }> {
  const all = await tryResolve(ports, start, changes, issues);
  if (all.ok) return { table: all.table, rows: all.rows, rejected: [] };
  let table = start;
  const rows: Row[] = [];
  const rejected: RejectedRecord[] = [];
  const byTimestamp = new Map<bigint, ReplicaChange[]>();
  for (const c of changes)
    byTimestamp.set(c.commitTimestamp, [...(byTimestamp.get(c.commitTimestamp) ?? []), c]);
  for (const group of byTimestamp.values()) {
    const out = await tryResolve(ports, table, group, issues);
    if (out.ok) {
      table = out.table;
      rows.push(...out.rows);
      continue;
    }
    for (const change of group) {
      const one = await tryResolve(ports, table, [change], issues);
      if (one.ok) {
        table = one.table;
        rows.push(...one.rows);
      } else rejected.push(...recordsOf(change, records).map((r) => reject(r, one.err)));
    }
  }
  return { table, rows, rejected };
}

/** Rows none of whose records is in `out`: a record is written whole or not at all. */
function without(rows: Row[], records: DataChangeRecord[], out: ReadonlySet<DataChangeRecord>): Row[] {
  return rows.filter((row) => !recordsOf(row, records).some((r) => out.has(r)));
}

/**
 * The rows of a failed write that were refused for their own content, each with its cause: rows BigQuery
 * rejected, or a row too large for any request (an {@link UnrepresentableError} naming its index). Undefined
 * when the failure is not a row's.
 */
function refusedRows(
  err: unknown,
  destination: string,
): Array<{ index: number; cause: unknown }> | undefined {
  if (err instanceof UnrepresentableError && err.rowIndex !== undefined)
    return [{ index: err.rowIndex, cause: err }];
  if (!(err instanceof RowsRejectedError)) return undefined;
  return err.rows.map((r) => ({
    index: r.index,
    cause: new RowsRejectedError(`BigQuery rejected the row of ${destination}: ${r.message}`, [r]),
  }));
}

/**
 * Writes the rows; rows BigQuery rejects for their content (or too large to send) reject their records, and
 * the rows of every other record are sent again (BigQuery writes nothing of a request with a rejected row; the
 * replica is idempotent).
 */
async function writeRows(
  replica: ReplicaSink,
  destination: string,
  rows: Row[],
  records: DataChangeRecord[],
  policy: BadRecordPolicy,
): Promise<{ rows: number; rejected: RejectedRecord[] }> {
  const rejected: RejectedRecord[] = [];
  const out = new Set<DataChangeRecord>();
  let pending = rows;
  // Each round removes at least one row, so this ends.
  while (pending.length > 0) {
    try {
      await replica.write(destination, pending);
      return { rows: pending.length, rejected };
    } catch (err) {
      const refused = refusedRows(err, destination);
      if (!refused) throw err;
      const before = out.size;
      for (const { index, cause } of refused) {
        const row = pending[index];
        if (!row) continue;
        for (const rec of recordsOf(row, records)) {
          if (out.has(rec)) continue;
          out.add(rec);
          rejected.push(reject(rec, cause));
        }
      }
      if (out.size === before) throw err;
      enforce(policy, rejected);
      pending = without(pending, records, out);
    }
  }
  return { rows: 0, rejected };
}

/** Plans and resolves the changes of `records`, setting aside records whose rows cannot be read or mapped. */
async function resolveRecords(
  ports: ReplicaPorts,
  start: ReplicatedTable,
  records: DataChangeRecord[],
  policy: BadRecordPolicy,
): Promise<{ rows: Row[]; good: DataChangeRecord[]; rejected: RejectedRecord[]; issues: ValueIssue[] }> {
  const rejected: RejectedRecord[] = [];
  let good = records;
  let table = start;
  // Each round with a rejection removes at least one record, so this ends.
  for (;;) {
    const { changes, issues } = buildReplicaChanges(good, optionsOf(table));
    const resolved = await resolveAll(ports, table, changes, good, issues);
    table = resolved.table;
    if (resolved.rejected.length === 0) return { rows: resolved.rows, good, rejected, issues };
    enforce(policy, resolved.rejected);
    rejected.push(...resolved.rejected);
    const out = new Set(resolved.rejected.map((r) => r.record));
    good = good.filter((r) => !out.has(r));
  }
}

/** What planning needs of the table's plan. */
function optionsOf(table: ReplicatedTable): ReplicaOptions {
  return { ignored: table.plan.ignored, readAtCommit: table.plan.readAtCommit.length > 0 };
}

/**
 * The upserts with the enriched columns of the key's last mod at their commit timestamp (records are in
 * canonical order, so a later mod overwrites): a replica row's enriched columns are as of its last change.
 * A DELETE carries the key alone.
 */
function withEnriched(rows: Row[], records: DataChangeRecord[], enriched: EnrichedMods | undefined): Row[] {
  if (!enriched || enriched.size === 0) return rows;
  const byChange = new Map<string, Record<string, unknown>>();
  for (const r of records)
    r.mods.forEach((mod, i) => {
      const columns = enriched.get(r)?.[i];
      if (columns) byChange.set(`${r.commitTimestamp}\u0000${keyText(mod.keys)}`, columns);
    });
  return rows.map((row) => {
    if (row.kind !== 'upsert') return row;
    const columns = byChange.get(`${row.commitTimestamp}\u0000${keyText(row.key)}`);
    return columns ? { ...row, row: { ...row.row, ...columns } as Row['row'] } : row;
  });
}

/**
 * Writes `records` (one source table's, of whole commit timestamps, its plan already following their
 * columns) to its replica under `policy`, upserts carrying the enriched columns of `enriched`.
 * @throws SluiceError (`permanent`) when the table has lookups and `enriched` lacks a record (nothing would
 *   write its enriched columns: BigQuery's UPSERT would set them NULL).
 */
export async function writeReplicaTable(
  ports: ReplicaPorts,
  table: ReplicatedTable,
  records: DataChangeRecord[],
  policy: BadRecordPolicy,
  log: Logger,
  enriched?: EnrichedMods,
): Promise<ReplicaTableOutcome> {
  const destination = table.targets.replica;
  if (!destination) return { rows: 0, rejected: [] };
  if (table.lookups.length > 0 && records.some((r) => !enriched?.has(r)))
    throw new SluiceError(
      'permanent',
      `the replica rows of ${table.source} were not enriched by its lookups`,
    );
  const options = optionsOf(table);
  const unplanned = planError(records, options) === undefined ? [] : isolatePlanning(records, options);
  enforce(policy, unplanned);
  const planned = new Set(unplanned.map((r) => r.record));
  const candidates = planned.size === 0 ? records : records.filter((r) => !planned.has(r));
  const resolved = await resolveRecords(ports, table, candidates, policy);
  const rows = withEnriched(resolved.rows, resolved.good, enriched);
  const written = await writeRows(ports.replica, destination, rows, resolved.good, policy);
  if (resolved.issues.length > 0)
    log.warn('replica.value-issues', {
      table: table.source,
      count: resolved.issues.length,
      first: resolved.issues.slice(0, 5),
    });
  return { rows: written.rows, rejected: [...unplanned, ...resolved.rejected, ...written.rejected] };
}
