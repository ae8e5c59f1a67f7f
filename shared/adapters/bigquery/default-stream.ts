/**
 * Appends JSON rows to a table's `_default` stream through the managed writer (rows encoded by
 * {@link RowEncoder}), one connection per table
 * reused across calls. Requests on one connection are sent one at a time: a schema-update notice makes the
 * client reconnect, and a write in flight on the old connection would never be answered.
 */
import { adapt, managedwriter, protos } from '@google-cloud/bigquery-storage';
import { SluiceError } from '../../domain/errors';
import { UnrepresentableError } from '../../domain/record-errors';
import { appendFailure, withAckDeadline } from './append-errors';
import { splitRequests } from './request-split';
import { type EncodableRows, type JsonRow, RowEncoder, rowAt, UnknownFieldError } from './row-encoder';

type TableSchema = protos.google.cloud.bigquery.storage.v1.ITableSchema;
type Descriptor = protos.google.protobuf.IDescriptorProto;

export type { JsonRow };

/** Limits of {@link DefaultStreamWriters}. */
export interface AppendLimits {
  /** Budget per AppendRows request, measured on the serialized rows (BigQuery's limit is on the request). */
  maxRequestBytes: number;
  /** Longest wait for one acknowledgement; a dropped stream can otherwise leave a write unanswered. */
  ackTimeoutMs: number;
  /**
   * Largest serialized row: a row is never split, and one beyond what an AppendRows request may carry
   * (BigQuery documents 20 MB per request) is an {@link UnrepresentableError}, before any row is sent.
   */
  maxRowBytes: number;
}

/** Defaults: requests well under the 10 MB the npm proto documents (BigQuery now documents 20 MB). */
export const DEFAULT_APPEND_LIMITS: AppendLimits = {
  maxRequestBytes: 8 * 1024 * 1024,
  ackTimeoutMs: 60_000,
  maxRowBytes: 19 * 1024 * 1024,
};

interface Open {
  writer: managedwriter.Writer;
  /** Rows → protobuf with the connection's current descriptor (replaced on a schema update). */
  encoder: RowEncoder;
  /** Set by the connection-error listener: the connection is re-established on the next write. */
  broken: boolean;
}

/** Open `_default` connections of one sink instance, keyed by table path. */
export class DefaultStreamWriters {
  private readonly open = new Map<string, Open>();
  private readonly queues = new Map<string, Promise<unknown>>();
  /** Columns just added to a table, by path: until a connection's descriptor has them, BigQuery lags. */
  private readonly added = new Map<string, Set<string>>();

  /**
   * @param cdc whether rows carry `_CHANGE_TYPE` / `_CHANGE_SEQUENCE_NUMBER` (kept in the descriptor,
   *   also after a schema update — the JSON writer's own handler would drop them).
   */
  constructor(
    private readonly client: managedwriter.WriterClient,
    private readonly cdc: boolean,
    private readonly limits: AppendLimits = DEFAULT_APPEND_LIMITS,
  ) {}

  /**
   * Appends `rows` to `tablePath` (`projects/p/datasets/d/tables/t`); resolves when every request was
   * acknowledged without error. Rejects with the client's error, or with the in-band status as an error
   * carrying its gRPC `code` and `rowErrors`. Calls on one table run one after another.
   */
  append(tablePath: string, rows: EncodableRows): Promise<void> {
    const previous = this.queues.get(tablePath) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.appendNow(tablePath, rows));
    this.queues.set(tablePath, next);
    return next;
  }

  /**
   * After the table's schema changed (`added`: the columns it gained): the next append opens a connection
   * with the current schema. Queued behind appends in flight, which closing their connection would leave
   * unanswered.
   */
  invalidate(tablePath: string, added: string[] = []): Promise<void> {
    if (added.length > 0) {
      const set = this.added.get(tablePath) ?? new Set<string>();
      for (const c of added) set.add(c);
      this.added.set(tablePath, set);
    }
    const previous = this.queues.get(tablePath) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.reset(tablePath));
    this.queues.set(tablePath, next);
    return next;
  }

  private reset(tablePath: string): void {
    const o = this.open.get(tablePath);
    this.open.delete(tablePath);
    o?.writer.close();
  }

  /** Closes every connection (call when no append is in flight). */
  close(): void {
    for (const path of [...this.open.keys()]) this.reset(path);
  }

  private async appendNow(tablePath: string, rows: EncodableRows): Promise<void> {
    if (rows.length === 0) return;
    let o = await this.connection(tablePath);
    try {
      let serializedRows: Uint8Array[];
      try {
        serializedRows = o.encoder.encode(rows);
      } catch (err) {
        if (!(err instanceof UnknownFieldError)) throw err;
        // The table may have gained the column since this connection opened (another instance added
        // it): a new connection reads the table's current schema.
        this.reset(tablePath);
        o = await this.connection(tablePath);
        serializedRows = this.encode(tablePath, o, rows);
      }
      this.checkRowSizes(tablePath, rows, serializedRows);
      // Row errors name rows of their request: shifted by the rows of the requests before, they name `rows`.
      let offset = 0;
      for (const request of splitRequests(serializedRows, this.limits.maxRequestBytes)) {
        const pending = o.writer.appendRows({ serializedRows: request });
        const response = await withAckDeadline(pending.getResult(), this.limits.ackTimeoutMs);
        const failure = appendFailure(response, offset);
        if (failure) throw failure;
        offset += request.length;
      }
    } catch (err) {
      // Whatever state the connection is in, a fresh one is the safe start for the re-sent batch.
      this.reset(tablePath);
      throw err;
    }
  }

  /**
   * Encodes with a fresh connection's descriptor. A value for a column the descriptor lacks is never
   * dropped: it is retryable when the column was just added (BigQuery serves a new schema to the Storage
   * Write API after a delay; a later connection has it), and permanent otherwise.
   */
  private encode(tablePath: string, o: Open, rows: EncodableRows): Uint8Array[] {
    try {
      return o.encoder.encode(rows);
    } catch (err) {
      if (!(err instanceof UnknownFieldError)) throw err;
      const table = tablePath.split('/').pop();
      const waiting = [...(this.added.get(tablePath) ?? [])];
      if (waiting.some((c) => c.toLowerCase() === err.column.toLowerCase()))
        throw new SluiceError(
          'retryable',
          `column ${err.column} was just added to BigQuery table ${table}, but the Storage Write API does not serve it yet; the batch is retried`,
          { cause: err },
        );
      throw new SluiceError(
        'permanent',
        `a row for BigQuery table ${table} has a value for column ${err.column}, which the table does not have; the row is not written (no value is dropped)`,
        { cause: err },
      );
    }
  }

  /** Columns a connection's descriptor has are no longer waited for. */
  private served(tablePath: string, encoder: RowEncoder): void {
    const waiting = this.added.get(tablePath);
    if (!waiting) return;
    for (const c of [...waiting]) if (encoder.has(c)) waiting.delete(c);
    if (waiting.size === 0) this.added.delete(tablePath);
  }

  /** Refuses the batch when one of its rows is larger than any request may carry (nothing is sent). */
  private checkRowSizes(tablePath: string, rows: EncodableRows, serialized: Uint8Array[]): void {
    const i = serialized.findIndex((r) => r.byteLength > this.limits.maxRowBytes);
    if (i < 0) return;
    const row = rowAt(rows, i) as JsonRow;
    const largest = Object.entries(row)
      .map(
        ([name, v]) => [name, typeof v === 'string' ? v.length : JSON.stringify(v ?? null).length] as const,
      )
      .sort((a, b) => b[1] - a[1])
      .slice(0, 3)
      .map(([name, n]) => `${name} ${n}`)
      .join(', ');
    throw new UnrepresentableError(
      'row-too-large',
      tablePath.split('/').pop() ?? tablePath,
      `a row is ${serialized[i]?.byteLength} bytes serialized, more than the ${this.limits.maxRowBytes} an AppendRows request may carry; it is not written (largest values, in characters: ${largest})`,
      i,
    );
  }

  private async connection(tablePath: string): Promise<Open> {
    const current = this.open.get(tablePath);
    if (current && !current.broken) return current;
    if (current) this.reset(tablePath);
    const stream = await this.client.getWriteStream({
      streamId: `${tablePath}/streams/_default`,
      view: protos.google.cloud.bigquery.storage.v1.WriteStreamView.FULL,
    });
    const connection = await this.client.createStreamConnection({
      streamId: managedwriter.DefaultStream,
      destinationTable: tablePath,
    });
    const protoDescriptor = this.descriptor(stream.tableSchema ?? {});
    const writer = new managedwriter.Writer({ connection, protoDescriptor });
    const o: Open = { writer, encoder: new RowEncoder(protoDescriptor), broken: false };
    this.served(tablePath, o.encoder);
    // Without an error listener the client throws non-retryable stream errors as uncaught exceptions.
    connection.onConnectionError(() => {
      o.broken = true;
    });
    // The descriptor keeps the CDC fields after a schema update (the client's JSON writer would drop them).
    connection.onSchemaUpdated((schema) => {
      const updated = this.descriptor(schema);
      writer.setProtoDescriptor(updated);
      o.encoder = new RowEncoder(updated);
      this.served(tablePath, o.encoder);
    });
    this.open.set(tablePath, o);
    return o;
  }

  private descriptor(schema: TableSchema): Descriptor {
    return this.cdc
      ? adapt.convertStorageSchemaToProto2Descriptor(
          schema,
          'root',
          adapt.withChangeType(),
          adapt.withChangeSequenceNumber(),
        )
      : adapt.convertStorageSchemaToProto2Descriptor(schema, 'root');
  }
}
