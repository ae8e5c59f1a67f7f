/**
 * The history sink on BigQuery: an append-only table partitioned by commit timestamp and clustered by
 * table name, written on the `_default` stream, with a view that shows each mod once (ADR-501).
 */
import {
  HISTORY_TABLE_FIELDS,
  HISTORY_TABLE_LAYOUT,
  type HistoryRow,
  historyDedupViewSql,
} from '../../domain/history-rows';
import type { HistorySink } from '../../ports/sinks';
import { type AppendLimits, DEFAULT_APPEND_LIMITS, DefaultStreamWriters } from './default-stream';
import type { SinkClients } from './replica-sink';
import { createTable, type DatasetRef, readFields, tablePath } from './table-admin';

/** Options of {@link BigQueryHistorySink}. */
export interface HistorySinkOptions extends DatasetRef {
  limits?: Partial<AppendLimits>;
}

/** Name of the dedup view of a history table. */
export function historyDedupViewName(destination: string): string {
  return `${destination}_dedup`;
}

/**
 * {@link HistorySink} on BigQuery. Appends are at least once: a batch re-sent after BigQuery acknowledged it
 * (the reader died before the ledger moved) is written again, and the dedup view removes the copies by
 * `change_id` (ADR-501 says why no per-batch stream is used).
 */
export class BigQueryHistorySink implements HistorySink {
  private readonly ensured = new Set<string>();
  private readonly writers: DefaultStreamWriters;

  constructor(
    private readonly clients: SinkClients,
    private readonly options: HistorySinkOptions,
  ) {
    this.writers = new DefaultStreamWriters(clients.writer, false, {
      ...DEFAULT_APPEND_LIMITS,
      ...options.limits,
    });
  }

  async ensureTable(destination: string): Promise<void> {
    if (this.ensured.has(destination)) return;
    const dataset = this.clients.bigquery.dataset(this.options.dataset, {
      projectId: this.options.projectId,
    });
    if ((await readFields(dataset.table(destination))) === undefined) {
      await createTable(this.clients.bigquery, this.options, destination, {
        schema: { fields: HISTORY_TABLE_FIELDS.map((f) => ({ ...f })) },
        timePartitioning: { ...HISTORY_TABLE_LAYOUT.timePartitioning },
        clustering: { fields: [...HISTORY_TABLE_LAYOUT.clustering.fields] },
      });
    }
    const view = historyDedupViewName(destination);
    if ((await readFields(dataset.table(view))) === undefined) {
      await createTable(this.clients.bigquery, this.options, view, {
        view: {
          query: historyDedupViewSql(this.options.projectId, this.options.dataset, destination),
          useLegacySql: false,
        },
      });
    }
    this.ensured.add(destination);
  }

  /** `batchKey` is not needed: the rows carry their identity (`change_id`) and the view deduplicates. */
  async append(destination: string, rows: HistoryRow[], _batchKey: string): Promise<void> {
    await this.writers.append(
      tablePath(this.options, destination),
      rows.map((r) => ({ ...r })),
    );
  }

  /** Closes the Storage Write connections. */
  close(): void {
    this.writers.close();
  }
}
