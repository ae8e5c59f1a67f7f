/**
 * In-memory sinks with BigQuery's semantics, for unit tests: the replica keeps, per primary key, the change
 * with the highest `_CHANGE_SEQUENCE_NUMBER` (ties go to the later write; deletes are remembered, so an older
 * late upsert loses); history (in its own module) models write streams and offsets; completeness is keyed by
 * (source table, destination table).
 */
import type { BigQueryField } from '../../domain/bigquery-schema';
import { compareChangeSequenceNumbers } from '../../domain/cdc-sequence';
import { SluiceError } from '../../domain/errors';
import type { TableSchema } from '../../domain/information-schema';
import { replicaTableMissing } from '../../domain/missing-table';
import type { ReplicaDelete, ReplicaUpsert } from '../../domain/replica-rows';
import type { Timestamp } from '../../domain/timestamp';
import { planFields } from '../../domain/type-changes';
import type { WriterValue } from '../../domain/value-mapping';
import type { CompletenessSink, EnsureOptions, ReplicaSink } from '../../ports/sinks';
import { replicaSchemaOf } from '../bigquery/replicated-columns';

type Row = Record<string, WriterValue>;

interface ReplicaTable {
  fields: BigQueryField[];
  primaryKey: string[];
  /** Per key: the winning change (a tombstone for a delete). */
  entries: Map<string, { sequence: string; deleted: boolean; row: Row }>;
}

/** Shared by the in-memory sinks: the next write fails with `error` (fault injection for tests). */
class Faults {
  private pending: unknown[] = [];
  failNext(error: unknown): void {
    this.pending.push(error);
  }
  check(): void {
    if (this.pending.length > 0) throw this.pending.shift();
  }
}

/** In-memory {@link ReplicaSink}. */
export class MemoryReplicaSink implements ReplicaSink {
  private readonly tables = new Map<string, ReplicaTable>();

  /** Deletes a table, as an operator deleting it in BigQuery would (for tests). */
  dropTable(destination: string): void {
    this.tables.delete(destination);
  }
  private readonly faults = new Faults();
  /** Counts of calls, for tests. */
  readonly calls = { ensureTable: 0, write: 0 };

  async ensureTable(
    destination: string,
    source: TableSchema,
    watched: 'all' | string[],
    options: EnsureOptions = {},
  ): Promise<void> {
    this.calls.ensureTable++;
    const schema = replicaSchemaOf(source, watched);
    const table = this.tables.get(destination);
    if (!table) {
      if (options.existed && !options.fresh) throw replicaTableMissing(`memory.${destination}`);
      this.tables.set(destination, { ...schema, entries: new Map() });
      return;
    }
    // The same evolution rules as BigQuery's table admin: add columns, widen in place, refuse the rest.
    const plan = planFields(
      table.fields,
      schema.fields,
      destination,
      source.name,
      new Map(source.columns.map((c) => [c.name, c.type])),
    );
    for (const w of plan.widen) {
      const field = table.fields.find((f) => f.name === w.name);
      if (field) field.type = w.to;
    }
    table.fields.push(...plan.add);
  }

  async write(destination: string, changes: Array<ReplicaUpsert | ReplicaDelete>): Promise<void> {
    this.calls.write++;
    this.faults.check();
    const table = this.tables.get(destination);
    if (!table) throw Object.assign(new Error(`table ${destination} not found`), { code: 5 });
    const fields = new Set(table.fields.map((f) => f.name));
    for (const change of changes) {
      for (const name in change.row)
        if (!fields.has(name))
          throw new SluiceError(
            'permanent',
            `a row for table ${destination} has a value for column ${name}, which the table does not have; the row is not written (no value is dropped)`,
          );
    }
    for (const change of changes) {
      const key = JSON.stringify(table.primaryKey.map((k) => change.row[k] ?? null));
      const current = table.entries.get(key);
      if (current && compareChangeSequenceNumbers(change.sequence, current.sequence) < 0) continue;
      table.entries.set(key, {
        sequence: change.sequence,
        deleted: change.kind === 'delete',
        row: change.row,
      });
    }
  }

  /** The next write rejects with `error`. */
  failNextWrite(error: unknown): void {
    this.faults.failNext(error);
  }

  /** Whether the table exists, and its fields and key. */
  table(destination: string): { fields: BigQueryField[]; primaryKey: string[] } | undefined {
    const t = this.tables.get(destination);
    return t && { fields: t.fields.map((f) => ({ ...f })), primaryKey: [...t.primaryKey] };
  }

  /** Current rows (deleted keys omitted), every field present (NULL, or empty for REPEATED, when missing). */
  rows(destination: string): Row[] {
    const t = this.tables.get(destination);
    if (!t) return [];
    return [...t.entries.values()]
      .filter((e) => !e.deleted)
      .map((e) =>
        Object.fromEntries(
          t.fields.map((f) => [f.name, e.row[f.name] ?? (f.mode === 'REPEATED' ? [] : null)]),
        ),
      );
  }
}

export { MemoryHistorySink } from './history-sink';

/** One row of the completeness table. */
export interface CompletenessRecord {
  sourceTable: string;
  destination: string;
  watermark: Timestamp;
}

/**
 * In-memory {@link CompletenessSink}: the highest watermark per (source table, destination table) — the
 * replica and the history of one source table are two rows — a late older one loses.
 */
export class MemoryCompletenessSink implements CompletenessSink {
  private readonly entries = new Map<string, CompletenessRecord>();

  async record(entries: CompletenessRecord[]): Promise<void> {
    for (const e of entries) {
      const key = JSON.stringify([e.sourceTable, e.destination]);
      const current = this.entries.get(key);
      if (!current || current.watermark <= e.watermark) this.entries.set(key, { ...e });
    }
  }

  /** The rows, by source table then destination. */
  rows(): CompletenessRecord[] {
    return [...this.entries.values()].sort(
      (a, b) => a.sourceTable.localeCompare(b.sourceTable) || a.destination.localeCompare(b.destination),
    );
  }
}
