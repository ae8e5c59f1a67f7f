/**
 * The completeness table on BigQuery: one row per source table with the watermark up to which its replica
 * is complete, kept current by CDC upserts (no query job: the deployment grants no project-level role).
 */
import { encodeChangeSequenceNumber } from '../../domain/cdc-sequence';
import { formatTimestamp, fromEpochMillis, type Timestamp, toBigQueryMicros } from '../../domain/timestamp';
import type { CompletenessSink } from '../../ports/sinks';
import { type AppendLimits, DEFAULT_APPEND_LIMITS, DefaultStreamWriters } from './default-stream';
import type { SinkClients } from './replica-sink';
import { createTable, type DatasetRef, readFields, tablePath } from './table-admin';

/** Default name of the completeness table. */
export const COMPLETENESS_TABLE = '_sluice_completeness';

/** Schema of the completeness table; `source_table` is its primary key. */
export const COMPLETENESS_FIELDS = [
  { name: 'source_table', type: 'STRING', mode: 'REQUIRED' },
  { name: 'destination', type: 'STRING', mode: 'NULLABLE' },
  { name: 'watermark', type: 'TIMESTAMP', mode: 'REQUIRED' },
  { name: 'watermark_ns', type: 'STRING', mode: 'REQUIRED' },
  { name: 'updated_at', type: 'TIMESTAMP', mode: 'REQUIRED' },
] as const;

/** Options of {@link BigQueryCompletenessSink}. */
export interface CompletenessSinkOptions extends DatasetRef {
  table?: string;
  limits?: Partial<AppendLimits>;
  /** Clock for `updated_at` (tests). */
  now?: () => Timestamp;
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
    const dataset = this.clients.bigquery.dataset(this.options.dataset, {
      projectId: this.options.projectId,
    });
    if ((await readFields(dataset.table(this.table))) === undefined) {
      await createTable(this.clients.bigquery, this.options, this.table, {
        schema: { fields: COMPLETENESS_FIELDS.map((f) => ({ ...f })) },
        tableConstraints: { primaryKey: { columns: ['source_table'] } },
      });
    }
    this.ensured = true;
  }
}
