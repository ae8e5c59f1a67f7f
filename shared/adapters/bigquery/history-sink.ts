/**
 * The history sink on BigQuery: an append-only table partitioned by commit timestamp and clustered by table
 * name, written on explicit write streams at offsets the application keeps in its ledger, so the raw table
 * holds each mod exactly once (ADR-1601). No dedup view: the table itself is the one to query.
 */
import { createHash } from 'node:crypto';
import { managedwriter, protos } from '@google-cloud/bigquery-storage';
import type { BigQueryField } from '../../domain/bigquery-schema';
import { SluiceError } from '../../domain/errors';
import { HISTORY_TABLE_FIELDS, HISTORY_TABLE_LAYOUT, type HistoryRow } from '../../domain/history-rows';
import { historyTableMissing } from '../../domain/missing-table';
import { fromEpochMillis, fromSecondsAndNanos, type Timestamp } from '../../domain/timestamp';
import { planFields } from '../../domain/type-changes';
import type { EnsureOptions, HistorySink, HistoryStream, OffsetAppendResult } from '../../ports/sinks';
import { type AppendLimits, DEFAULT_APPEND_LIMITS } from './default-stream';
import { ExplicitStreamWriters } from './explicit-streams';
import type { SinkClients } from './replica-sink';
import { addFieldsGuarded, createTable, type DatasetRef, readFields, tablePath } from './table-admin';

type TableSchema = protos.google.cloud.bigquery.storage.v1.ITableSchema;
type TableFieldSchema = protos.google.cloud.bigquery.storage.v1.ITableFieldSchema;

/** Options of {@link BigQueryHistorySink}. */
export interface HistorySinkOptions extends DatasetRef {
  limits?: Partial<AppendLimits>;
  /**
   * How long a table schema read is trusted before it is read again (default one minute): a column added
   * to the table shows within this, so streams of the older schema are replaced.
   */
  schemaTtlMs?: number;
  /** Clock dating a stream whose creation answer has no time (default: the system clock). */
  now?: () => Timestamp;
}

const NOT_FOUND = 5;
const DEADLINE_EXCEEDED = 4;
const UNAVAILABLE = 14;
/**
 * CreateWriteStream without retrying RESOURCE_EXHAUSTED: the generated client retries it for up to ten
 * minutes, which would hold a reader past its task deadline; the reader answers 429 instead and Cloud Tasks
 * backs off.
 */
const CREATE_RETRY = { retry: { retryCodes: [DEADLINE_EXCEEDED, UNAVAILABLE] } } as never;

function fieldText(f: TableFieldSchema): string {
  const nested = (f.fields ?? []).map(fieldText).join(',');
  return `${f.name}:${String(f.type)}:${String(f.mode ?? 'NULLABLE')}${nested ? `(${nested})` : ''}`;
}

/** A short fingerprint of a Storage Write table schema (names, types, modes, in order). */
export function schemaFingerprint(schema: TableSchema): string {
  const text = (schema.fields ?? []).map(fieldText).join(',');
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

/** {@link HistorySink} on BigQuery. */
export class BigQueryHistorySink implements HistorySink {
  private readonly ensured = new Set<string>();
  /** The table schema per table path, as last read or announced, with when (ms). */
  private readonly schemas = new Map<string, { schema: TableSchema; at: number }>();
  private readonly writers: ExplicitStreamWriters;

  constructor(
    private readonly clients: SinkClients,
    private readonly options: HistorySinkOptions,
  ) {
    this.writers = new ExplicitStreamWriters(
      clients.writer,
      {
        schemaOf: (path) => this.schemaOf(path),
        schemaUpdated: (path, schema) => this.schemas.set(path, { schema, at: Date.now() }),
      },
      { ...DEFAULT_APPEND_LIMITS, ...options.limits },
    );
  }

  async ensureTable(
    destination: string,
    enriched: readonly BigQueryField[] = [],
    options: EnsureOptions = {},
  ): Promise<void> {
    const signature = `${destination}\u0000${JSON.stringify(enriched)}`;
    if (!options.fresh && this.ensured.has(signature)) return;
    const wanted = [...HISTORY_TABLE_FIELDS, ...enriched];
    const table = this.clients.bigquery
      .dataset(this.options.dataset, { projectId: this.options.projectId })
      .table(destination);
    const fields = await readFields(table);
    if (fields === undefined) {
      // Created before by the pipeline and now missing: deleted, with history that exists nowhere else.
      if (options.existed && !options.fresh)
        throw historyTableMissing(`${this.options.dataset}.${destination}`);
      await createTable(this.clients.bigquery, this.options, destination, {
        schema: { fields: wanted.map((f) => ({ ...f })) },
        timePartitioning: { ...HISTORY_TABLE_LAYOUT.timePartitioning },
        clustering: { fields: [...HISTORY_TABLE_LAYOUT.clustering.fields] },
      });
    } else {
      // A table made by an older version gains the columns this one writes, and the enriched columns of
      // lookups configured since (an incompatible type of one is an error naming it, never a dropped value).
      await addFieldsGuarded(table, async (existing) => planFields(existing, wanted, destination).add);
    }
    this.schemas.delete(this.path(destination));
    this.ensured.add(signature);
  }

  async tableSchema(destination: string): Promise<string> {
    return schemaFingerprint(await this.schemaOf(this.path(destination)));
  }

  async createStream(destination: string, type: 'committed' | 'pending'): Promise<HistoryStream> {
    const path = this.path(destination);
    const stream = await this.clients.writer
      .createWriteStreamFullResponse(
        {
          streamType: type === 'committed' ? managedwriter.CommittedStream : managedwriter.PendingStream,
          destinationTable: path,
        },
        CREATE_RETRY,
      )
      .catch((err: unknown) => {
        // The table this instance ensured is gone (its streams went with it): deleted under the pipeline.
        if ((err as { code?: unknown } | null)?.code !== NOT_FOUND) throw err;
        for (const s of this.ensured) if (s.startsWith(`${destination}\u0000`)) this.ensured.delete(s);
        throw historyTableMissing(`${this.options.dataset}.${destination}`);
      });
    if (!stream.name) throw new SluiceError('retryable', `CreateWriteStream on ${path} returned no name`);
    // The fingerprint comes from the same read `tableSchema` makes (not the creation answer), so the two can
    // only differ when the table's schema really changed: a difference in how the two answers render one
    // schema must never make every flush replace its stream.
    this.schemas.delete(path);
    const created = stream.createTime;
    return {
      name: stream.name,
      // Without a creation time the stream is dated now (when it is recorded): the epoch would make it
      // due for rotation by age at every flush.
      createdAt:
        created?.seconds === undefined || created.seconds === null
          ? this.now()
          : fromSecondsAndNanos(String(created.seconds), Number(created.nanos ?? 0)),
      schema: await this.tableSchema(destination),
    };
  }

  appendAt(
    destination: string,
    stream: string,
    offset: number,
    rows: HistoryRow[],
  ): Promise<OffsetAppendResult> {
    return this.writers.appendAt(this.path(destination), stream, offset, rows as never);
  }

  async finalizeStream(_destination: string, stream: string): Promise<number | null> {
    await this.writers.close(stream);
    try {
      const response = await this.clients.writer.finalizeWriteStream({ name: stream });
      // Not reported is not "empty": the caller takes an unknown count from the ledger and says so.
      if (response.rowCount === undefined || response.rowCount === null) return null;
      return Number(response.rowCount);
    } catch (err) {
      if ((err as { code?: unknown }).code === NOT_FOUND) return null;
      throw err;
    }
  }

  // One stream per call: a batch commit is all or none, and one committed before would fail the rest.
  async commitStream(destination: string, stream: string): Promise<'committed' | 'gone'> {
    const response = await this.clients.writer.batchCommitWriteStream({
      parent: this.path(destination),
      writeStreams: [stream],
    });
    const errors = response.streamErrors ?? [];
    const code = (e: (typeof errors)[number]) => String(e.code);
    if (errors.some((e) => code(e) === 'STREAM_NOT_FOUND')) return 'gone';
    const failed = errors.filter((e) => code(e) !== 'STREAM_ALREADY_COMMITTED');
    if (failed.length > 0) {
      const what = failed.map((e) => `${code(e)}: ${e.errorMessage ?? ''}`).join('; ');
      throw new SluiceError('retryable', `committing history stream ${stream} failed: ${what}`);
    }
    if (!response.commitTime && errors.length === 0) {
      throw new SluiceError('retryable', `committing history stream ${stream} returned no commit time`);
    }
    return 'committed';
  }

  releaseStreams(streams: string[]): void {
    for (const stream of streams) void this.writers.close(stream);
  }

  /** Closes the Storage Write connections. */
  close(): void {
    void this.writers.closeAll();
  }

  private now(): Timestamp {
    return (this.options.now ?? (() => fromEpochMillis(Date.now())))();
  }

  private path(destination: string): string {
    return tablePath(this.options, destination);
  }

  private async schemaOf(path: string): Promise<TableSchema> {
    const cached = this.schemas.get(path);
    if (cached && Date.now() - cached.at < (this.options.schemaTtlMs ?? 60_000)) return cached.schema;
    const stream = await this.clients.writer.getWriteStream({
      streamId: `${path}/streams/_default`,
      view: protos.google.cloud.bigquery.storage.v1.WriteStreamView.FULL,
    });
    const schema = stream.tableSchema ?? {};
    this.schemas.set(path, { schema, at: Date.now() });
    return schema;
  }
}
