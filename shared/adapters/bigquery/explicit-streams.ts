/**
 * Appends at offsets on explicit (COMMITTED or PENDING) write streams through the managed writer: one
 * connection per stream, one request in flight, every request carrying the offset of its first row. BigQuery's
 * `ALREADY_EXISTS` and `OUT_OF_RANGE` answers are results, not errors (ADR-1601); a stream BigQuery no longer
 * accepts (finalized, unknown, refusing the writer's schema) is reported as unusable so the application can
 * replace it. Client-side retries stay off: a re-sent request must be decided by the caller, with its offset.
 */
import { adapt, managedwriter, protos } from '@google-cloud/bigquery-storage';
import type { OffsetAppendResult } from '../../ports/sinks';
import { appendFailure, withAckDeadline } from './append-errors';
import type { AppendLimits } from './default-stream';
import { splitRequests } from './request-split';
import { type JsonRow, RowEncoder } from './row-encoder';

type TableSchema = protos.google.cloud.bigquery.storage.v1.ITableSchema;

const INVALID_ARGUMENT = 3;
const NOT_FOUND = 5;
const FAILED_PRECONDITION = 9;
const ALREADY_EXISTS = 6;
const OUT_OF_RANGE = 11;
const { StorageErrorCode } = protos.google.cloud.bigquery.storage.v1.StorageError;

interface Open {
  writer: managedwriter.Writer;
  encoder: RowEncoder;
  broken: boolean;
}

/** The table schema a connection encodes with, and what to do when BigQuery announces a new one. */
export interface SchemaSource {
  schemaOf(tablePath: string): Promise<TableSchema>;
  schemaUpdated(tablePath: string, schema: TableSchema): void;
}

/** A failure that means the stream takes no more rows, as an unusable result; undefined otherwise. */
export function unusableOf(err: unknown): (OffsetAppendResult & { kind: 'unusable' }) | undefined {
  const message = (err as { message?: unknown } | null)?.message;
  const text = typeof message === 'string' ? message : String(err);
  let codes: number[] = [];
  try {
    codes = managedwriter.parseStorageErrors(err as never).map((e) => Number(e.code));
  } catch {
    // No StorageError trailer: decide from the gRPC code alone.
  }
  const code = (err as { code?: unknown } | null)?.code;
  // The StorageError detail is the documented signal; an in-band status without it names the state in words.
  const saysFinalized =
    (code === INVALID_ARGUMENT || code === FAILED_PRECONDITION) && /finali[sz]ed/i.test(text);
  if (codes.includes(StorageErrorCode.STREAM_FINALIZED) || saysFinalized)
    return { kind: 'unusable', reason: 'finalized', message: text };
  if (codes.includes(StorageErrorCode.SCHEMA_MISMATCH_EXTRA_FIELDS))
    return { kind: 'unusable', reason: 'schema-refused', message: text };
  if (codes.includes(StorageErrorCode.STREAM_NOT_FOUND) || code === NOT_FOUND)
    return { kind: 'unusable', reason: 'gone', message: text };
  return undefined;
}

/** Open explicit-stream connections of one sink instance, keyed by stream name. */
export class ExplicitStreamWriters {
  private readonly open = new Map<string, Open>();
  private readonly queues = new Map<string, Promise<unknown>>();
  /**
   * Encoders by descriptor: a partition's stream connection lives for one window, but building a protobufjs
   * type (code generation) for each would cost more than a small window's rows.
   */
  private readonly encoders = new Map<string, RowEncoder>();

  constructor(
    private readonly client: managedwriter.WriterClient,
    private readonly schemas: SchemaSource,
    private readonly limits: AppendLimits,
  ) {}

  /** Appends `rows` at `offset` of `stream` (a stream of `tablePath`); calls on one stream run in order. */
  appendAt(tablePath: string, stream: string, offset: number, rows: JsonRow[]): Promise<OffsetAppendResult> {
    return this.enqueue(stream, () => this.appendNow(tablePath, stream, offset, rows));
  }

  /** Closes the connection of `stream`, if any, once the requests queued on it are answered. */
  close(stream: string): Promise<void> {
    return this.enqueue(stream, async () => this.drop(stream));
  }

  /** Closes every connection. */
  async closeAll(): Promise<void> {
    await Promise.all([...this.open.keys()].map((stream) => this.close(stream)));
  }

  /** Runs `work` after everything queued on `stream`; the queue is forgotten once it is empty again. */
  private enqueue<T>(stream: string, work: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(stream) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(work);
    this.queues.set(stream, next);
    const forget = () => {
      if (this.queues.get(stream) === next) this.queues.delete(stream);
    };
    next.then(forget, forget);
    return next;
  }

  private async appendNow(
    tablePath: string,
    stream: string,
    offset: number,
    rows: JsonRow[],
  ): Promise<OffsetAppendResult> {
    if (rows.length === 0) return { kind: 'appended' };
    let at = offset;
    try {
      const o = await this.connection(tablePath, stream);
      for (const request of splitRequests(o.encoder.encode(rows), this.limits.maxRequestBytes)) {
        const pending = o.writer.appendRows({ serializedRows: request }, at);
        const response = await withAckDeadline(pending.getResult(), this.limits.ackTimeoutMs);
        const code = response.error?.code ?? 0;
        if (code === ALREADY_EXISTS) return { kind: 'already-exists', offset: at };
        if (code === OUT_OF_RANGE) return { kind: 'out-of-range', offset: at };
        const failure = appendFailure(response);
        if (failure) throw failure;
        at += request.length;
      }
      return { kind: 'appended' };
    } catch (err) {
      // Whatever state the connection is in, a fresh one is the safe start for whatever comes next.
      this.drop(stream);
      // The offset answers may also come as the connection's status, the append's result rejected: the same
      // answer as in band (an ALREADY_EXISTS left to the classifier would read as another reader's conflict).
      const code = (err as { code?: unknown } | null)?.code;
      if (code === ALREADY_EXISTS) return { kind: 'already-exists', offset: at };
      if (code === OUT_OF_RANGE) return { kind: 'out-of-range', offset: at };
      const unusable = unusableOf(err);
      if (unusable) return unusable;
      throw err;
    }
  }

  private drop(stream: string): void {
    const o = this.open.get(stream);
    this.open.delete(stream);
    o?.writer.close();
  }

  private encoderFor(
    descriptor: ReturnType<typeof adapt.convertStorageSchemaToProto2Descriptor>,
  ): RowEncoder {
    const key = JSON.stringify(descriptor);
    let encoder = this.encoders.get(key);
    if (!encoder) {
      // Few distinct schemas ever: one per history table and version of it.
      if (this.encoders.size >= 64) this.encoders.clear();
      encoder = new RowEncoder(descriptor);
      this.encoders.set(key, encoder);
    }
    return encoder;
  }

  private async connection(tablePath: string, stream: string): Promise<Open> {
    const current = this.open.get(stream);
    if (current && !current.broken) return current;
    if (current) this.drop(stream);
    const schema = await this.schemas.schemaOf(tablePath);
    const connection = await this.client.createStreamConnection({ streamId: stream });
    const protoDescriptor = adapt.convertStorageSchemaToProto2Descriptor(schema, 'root');
    const writer = new managedwriter.Writer({ connection, protoDescriptor });
    const o: Open = { writer, encoder: this.encoderFor(protoDescriptor), broken: false };
    // Without an error listener the client throws non-retryable stream errors as uncaught exceptions.
    connection.onConnectionError(() => {
      o.broken = true;
    });
    // The stream keeps the schema it was created with; the sink notes the table's new one, and the
    // application replaces the stream before it writes rows of that schema.
    connection.onSchemaUpdated((updated) => this.schemas.schemaUpdated(tablePath, updated));
    this.open.set(stream, o);
    return o;
  }
}
