/**
 * The completeness table on BigQuery: one row per (source table, destination table) — a source table's
 * replica and history are two rows — with the watermark up to which the destination is complete, kept
 * current by CDC upserts (no query job: the deployment grants no project-level role).
 */
import type { Table, TableMetadata } from '@google-cloud/bigquery';
import { encodeChangeSequenceNumber } from '../../domain/cdc-sequence';
import { formatTimestamp, fromEpochMillis, type Timestamp, toBigQueryMicros } from '../../domain/timestamp';
import type { CompletenessSink } from '../../ports/sinks';
import { type AppendLimits, DEFAULT_APPEND_LIMITS, DefaultStreamWriters } from './default-stream';
import type { SinkClients } from './replica-sink';
import { createTable, type DatasetRef, readFields, tablePath } from './table-admin';

/** Default name of the completeness table. */
export const COMPLETENESS_TABLE = '_sluice_completeness';

/** Schema of the completeness table; (`source_table`, `destination`) is its primary key. */
export const COMPLETENESS_FIELDS = [
  { name: 'source_table', type: 'STRING', mode: 'REQUIRED' },
  // NULLABLE as the first version created it; every row carries it.
  { name: 'destination', type: 'STRING', mode: 'NULLABLE' },
  { name: 'watermark', type: 'TIMESTAMP', mode: 'REQUIRED' },
  { name: 'watermark_ns', type: 'STRING', mode: 'REQUIRED' },
  { name: 'updated_at', type: 'TIMESTAMP', mode: 'REQUIRED' },
] as const;

/** The completeness table's primary key. */
export const COMPLETENESS_KEY = ['source_table', 'destination'] as const;

/** Options of {@link BigQueryCompletenessSink}. */
export interface CompletenessSinkOptions extends DatasetRef {
  table?: string;
  limits?: Partial<AppendLimits>;
  /** Clock for `updated_at` (tests). */
  now?: () => Timestamp;
  /** Notice of a change an operator should know about (the table was recreated with the current key). */
  log?: (event: string, fields: Record<string, unknown>) => void;
}

/** Whether the table's primary key is {@link COMPLETENESS_KEY}. */
async function hasCurrentKey(table: Table): Promise<boolean> {
  const [metadata] = await table.getMetadata();
  const columns = (metadata as TableMetadata).tableConstraints?.primaryKey?.columns ?? [];
  return columns.join() === COMPLETENESS_KEY.join();
}

/** One completeness entry. */
export interface CompletenessEntry {
  sourceTable: string;
  destination: string;
  watermark: Timestamp;
}

/**
 * The CDC row of an entry. Its sequence number is (watermark, update time): a watermark never moves back, so
 * a late write of an older entry loses; equal watermarks keep the latest update.
 */
export function completenessRow(entry: CompletenessEntry, updatedAt: Timestamp) {
  return {
    source_table: entry.sourceTable,
    destination: entry.destination,
    watermark: toBigQueryMicros(entry.watermark).toString(),
    watermark_ns: formatTimestamp(entry.watermark),
    updated_at: toBigQueryMicros(updatedAt).toString(),
    _CHANGE_TYPE: 'UPSERT',
    _CHANGE_SEQUENCE_NUMBER: encodeChangeSequenceNumber({
      commitTimestamp: entry.watermark,
      recordSequence: updatedAt,
      modIndex: 0,
    }),
  };
}

/** {@link CompletenessSink} on BigQuery. */
export class BigQueryCompletenessSink implements CompletenessSink {
  private ensured = false;
  private readonly writers: DefaultStreamWriters;
  private readonly table: string;

  constructor(
    private readonly clients: SinkClients,
    private readonly options: CompletenessSinkOptions,
  ) {
    this.table = options.table ?? COMPLETENESS_TABLE;
    this.writers = new DefaultStreamWriters(clients.writer, true, {
      ...DEFAULT_APPEND_LIMITS,
      ...options.limits,
    });
  }

  async record(entries: CompletenessEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await this.ensureTable();
    const updatedAt = (this.options.now ?? (() => fromEpochMillis(Date.now())))();
    await this.writers.append(
      tablePath(this.options, this.table),
      entries.map((e) => completenessRow(e, updatedAt)),
    );
  }

  /** Closes the Storage Write connection. */
  close(): void {
    this.writers.close();
  }

  private async ensureTable(): Promise<void> {
    if (this.ensured) return;
    const table = this.clients.bigquery
      .dataset(this.options.dataset, { projectId: this.options.projectId })
      .table(this.table);
    if ((await readFields(table)) !== undefined && !(await hasCurrentKey(table))) {
      // Made by a version keyed by source table alone, where replica and history rows overwrote each
      // other. Its rows are derived (rewritten at every tick), so it is recreated with the right key.
      await table.delete({ ignoreNotFound: true });
      await this.writers.invalidate(tablePath(this.options, this.table));
      this.options.log?.('completeness.recreated', { table: this.table, key: COMPLETENESS_KEY });
    }
    if ((await readFields(table)) === undefined) {
      await createTable(this.clients.bigquery, this.options, this.table, {
        schema: { fields: COMPLETENESS_FIELDS.map((f) => ({ ...f })) },
        tableConstraints: { primaryKey: { columns: [...COMPLETENESS_KEY] } },
      });
    }
    this.ensured = true;
  }
}
