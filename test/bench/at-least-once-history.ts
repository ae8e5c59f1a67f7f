/**
 * The history as it was before ADR-1601, for the benchmark's comparison: every append goes to the table's
 * `_default` stream without an offset (at least once), through the same managed-writer path and row
 * encoding as the replica. Offsets and streams are accepted and ignored.
 */
import { DEFAULT_APPEND_LIMITS, DefaultStreamWriters } from '../../shared/adapters/bigquery/default-stream';
import type { BigQueryHistorySink } from '../../shared/adapters/bigquery/history-sink';
import type { SinkClients } from '../../shared/adapters/bigquery/replica-sink';
import { type DatasetRef, tablePath } from '../../shared/adapters/bigquery/table-admin';
import type { HistoryRow } from '../../shared/domain/history-rows';
import { fromEpochMillis } from '../../shared/domain/timestamp';
import type { HistorySink, HistoryStream, OffsetAppendResult } from '../../shared/ports/sinks';

/** At-least-once history on `_default` (benchmark baseline only). */
export class AtLeastOnceHistory implements HistorySink {
  private readonly writers: DefaultStreamWriters;

  constructor(
    clients: SinkClients,
    private readonly ref: DatasetRef,
    private readonly tables: BigQueryHistorySink,
  ) {
    this.writers = new DefaultStreamWriters(clients.writer, false, DEFAULT_APPEND_LIMITS);
  }
  ensureTable(...args: Parameters<HistorySink['ensureTable']>): Promise<void> {
    return this.tables.ensureTable(...args);
  }
  tableSchema(destination: string): Promise<string> {
    return this.tables.tableSchema(destination);
  }
  async createStream(destination: string): Promise<HistoryStream> {
    return {
      name: `${tablePath(this.ref, destination)}/streams/_default`,
      createdAt: fromEpochMillis(Date.now()),
      schema: await this.tables.tableSchema(destination),
    };
  }
  async appendAt(
    destination: string,
    _s: string,
    _o: number,
    rows: HistoryRow[],
  ): Promise<OffsetAppendResult> {
    await this.writers.append(tablePath(this.ref, destination), rows as never);
    return { kind: 'appended' };
  }
  async finalizeStream(): Promise<number | null> {
    return null;
  }
  async commitStream(): Promise<'committed'> {
    return 'committed';
  }
  releaseStreams(): void {}
  close(): void {
    this.writers.close();
  }
}
