/**
 * Write streams of the Storage Write API: the `_default` stream of every table plus explicit COMMITTED,
 * PENDING and BUFFERED streams with their offsets, finalization, commit and flush, the CreateWriteStream
 * quota (a configurable number of creations per sliding window) and the three-day expiry of idle streams
 * (on request, through the admin handle).
 */
import { randomUUID } from 'node:crypto';
import { GrpcCode as Code } from '../../../shared/domain/errors';
import type { Catalog, Table } from './catalog';
import { StorageErrorCode } from './protos';
import { type CreateStreamQuota, CreationQuota, DEFAULT_CREATE_STREAM_QUOTA } from './stream-quota';
import type { IncomingRow } from './table-state';

/** Explicit stream types. */
export type StreamType = 'COMMITTED' | 'PENDING' | 'BUFFERED';

/** An explicit write stream. */
export interface WriteStreamState {
  name: string;
  table: Table;
  type: StreamType;
  createTimeNs: bigint;
  commitTimeNs?: bigint;
  finalized: boolean;
  /** Every row appended, in offset order. */
  rows: IncomingRow[];
  /** How many rows are visible in the table (flushed, committed or directly applied). */
  visible: number;
}

/** A gRPC-level failure: code, message and an optional StorageError for the trailer. */
export class WriteError extends Error {
  /** The StorageError's own message, when it differs from the status message. */
  storageMessage?: string;
  constructor(
    readonly code: number,
    message: string,
    readonly storageCode?: number,
    readonly entity = '',
  ) {
    super(message);
  }
}

/** gRPC status codes (`google.rpc.Code`): the domain's table, which also classifies these failures. */
export { Code };

/** The service's NOT_FOUND for a table or stream name, with the StorageError code saying which. */
function notFound(name: string, storageCode: number): WriteError {
  return new WriteError(Code.NOT_FOUND, `Requested entity was not found. Entity: ${name}`, storageCode, name);
}

/** Current time as nanoseconds since the epoch (millisecond resolution is enough for stream times). */
export function nowNs(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}

/** What the admin handle shows of an explicit stream. */
export interface StreamInfo {
  name: string;
  type: StreamType;
  /** Rows appended (the end offset). */
  rows: number;
  finalized: boolean;
  committed: boolean;
}

/** A change to the streams or to what they made visible (persistence journals these). */
export type StreamChange =
  | { k: 'stream'; s: WriteStreamState }
  | { k: 'streamRows'; name: string; rows: IncomingRow[] }
  | { k: 'ingest'; table: Table; stream: string; rows: IncomingRow[] };

/** Registry of explicit streams. */
export class WriteStreams {
  private streams = new Map<string, WriteStreamState>();
  readonly quota: CreationQuota;
  /** Called after every change (persistence). */
  onChange?: (change: StreamChange) => void;

  constructor(
    private readonly catalog: Catalog,
    quota: CreateStreamQuota = DEFAULT_CREATE_STREAM_QUOTA,
  ) {
    this.quota = new CreationQuota(quota);
  }

  /** Every explicit stream (persistence). */
  all(): WriteStreamState[] {
    return [...this.streams.values()];
  }

  /** Adds or replaces a stream as it was saved (persistence). */
  put(stream: WriteStreamState): void {
    this.streams.set(stream.name, stream);
  }

  /** Applies rows appended to a table's `_default` stream. */
  ingestDefault(table: Table, stream: string, rows: IncomingRow[]): void {
    table.state.ingest(stream, rows);
    this.onChange?.({ k: 'ingest', table, stream, rows });
  }

  /** The table a stream name or table path points at (views are not writable). */
  tableOf(name: string): Table {
    const table = this.catalog.tableByPath(name);
    if (!table) {
      throw notFound(name, StorageErrorCode.TABLE_NOT_FOUND);
    }
    if (table.view) {
      throw new WriteError(
        Code.INVALID_ARGUMENT,
        `Cannot write to a view. Entity: ${name}`,
        StorageErrorCode.INVALID_STREAM_TYPE,
        name,
      );
    }
    return table;
  }

  create(parent: string, type: StreamType): WriteStreamState {
    const table = this.tableOf(parent);
    const refused = this.quota.charge(table.ref.projectId, table.path());
    if (refused) throw new WriteError(Code.RESOURCE_EXHAUSTED, refused);
    const name = `${table.path()}/streams/${randomUUID().replace(/-/g, '')}`;
    const createTimeNs = nowNs();
    const stream: WriteStreamState = {
      name,
      table,
      type,
      createTimeNs,
      ...(type === 'COMMITTED' ? { commitTimeNs: createTimeNs } : {}),
      finalized: false,
      rows: [],
      visible: 0,
    };
    this.streams.set(name, stream);
    this.onChange?.({ k: 'stream', s: stream });
    return stream;
  }

  /** An explicit stream, or undefined for `_default`. Throws NOT_FOUND for unknown names. */
  get(name: string): WriteStreamState | undefined {
    if (isDefaultStream(name)) {
      this.tableOf(name);
      return undefined;
    }
    const stream = this.streams.get(name);
    if (!stream || this.catalog.tableByPath(name) !== stream.table) {
      throw notFound(name, StorageErrorCode.STREAM_NOT_FOUND);
    }
    return stream;
  }

  /**
   * Checks an append against an explicit stream's end; returns the first row's offset. Offsets beyond the
   * end are OUT_OF_RANGE, offsets already written ALREADY_EXISTS (both answered in-band by the caller).
   */
  checkOffset(stream: WriteStreamState, offset: bigint | undefined): number {
    if (stream.finalized) {
      throw new WriteError(
        Code.INVALID_ARGUMENT,
        `Stream is finalized. Entity: ${stream.name}`,
        StorageErrorCode.STREAM_FINALIZED,
        stream.name,
      );
    }
    const end = BigInt(stream.rows.length);
    if (offset === undefined || offset === end) return stream.rows.length;
    if (offset < end) {
      throw new WriteError(
        Code.ALREADY_EXISTS,
        `The offset is within stream, expected offset ${end}, received ${offset}. Entity: ${stream.name}`,
        StorageErrorCode.OFFSET_ALREADY_EXISTS,
        stream.name,
      );
    }
    throw new WriteError(
      Code.OUT_OF_RANGE,
      `The offset is beyond stream, expected offset ${end}, received ${offset}. Entity: ${stream.name}`,
      StorageErrorCode.OFFSET_OUT_OF_RANGE,
      stream.name,
    );
  }

  /** Appends validated rows to an explicit stream; COMMITTED rows become visible at once. */
  append(stream: WriteStreamState, rows: IncomingRow[]): void {
    stream.rows.push(...rows);
    if (stream.type === 'COMMITTED') this.publish(stream, stream.rows.length);
    this.onChange?.({ k: 'streamRows', name: stream.name, rows });
  }

  finalize(name: string): number {
    const stream = this.get(name);
    if (!stream) {
      throw new WriteError(
        Code.INVALID_ARGUMENT,
        `FinalizeWriteStream is not supported on the default stream. Entity: ${name}`,
      );
    }
    stream.finalized = true;
    this.onChange?.({ k: 'stream', s: stream });
    return stream.rows.length;
  }

  flush(name: string, offset: bigint): bigint {
    const stream = this.get(name);
    if (stream?.type !== 'BUFFERED') {
      throw new WriteError(
        Code.INVALID_ARGUMENT,
        `FlushRows is supported only on BUFFERED streams. Entity: ${name}`,
        StorageErrorCode.INVALID_STREAM_TYPE,
        name,
      );
    }
    if (offset >= BigInt(stream.rows.length)) {
      throw new WriteError(
        Code.OUT_OF_RANGE,
        `Offset ${offset} is beyond the end of the stream. Entity: ${name}`,
        StorageErrorCode.OFFSET_OUT_OF_RANGE,
        name,
      );
    }
    this.publish(stream, Number(offset) + 1);
    this.onChange?.({ k: 'stream', s: stream });
    return offset;
  }

  /** BatchCommitWriteStreams: all or none. Returns the per-stream errors (empty on success). */
  batchCommit(
    parent: string,
    names: string[],
  ): Array<{ code: number; entity: string; errorMessage: string }> {
    const table = this.tableOf(parent);
    const errors: Array<{ code: number; entity: string; errorMessage: string }> = [];
    const ok: WriteStreamState[] = [];
    for (const name of names) {
      const stream = this.streams.get(name);
      const fail = (code: number, errorMessage: string) => errors.push({ code, entity: name, errorMessage });
      if (!stream || stream.table !== table)
        fail(StorageErrorCode.STREAM_NOT_FOUND, `Stream not found: ${name}`);
      else if (stream.type !== 'PENDING') {
        fail(
          StorageErrorCode.INVALID_STREAM_TYPE,
          `Stream must be created in pending mode, actual: ${stream.type === 'COMMITTED' ? 'WRITE_OPTIMIZED' : stream.type}`,
        );
      } else if (stream.commitTimeNs !== undefined)
        fail(StorageErrorCode.STREAM_ALREADY_COMMITTED, `Stream already committed: ${name}`);
      else if (!stream.finalized)
        fail(StorageErrorCode.INVALID_STREAM_STATE, `Stream is not finalized: ${name}`);
      else ok.push(stream);
    }
    if (errors.length > 0) return errors;
    const commitTimeNs = nowNs();
    for (const stream of ok) {
      stream.commitTimeNs = commitTimeNs;
      this.publish(stream, stream.rows.length);
      this.onChange?.({ k: 'stream', s: stream });
    }
    return [];
  }

  /** Makes rows up to `upTo` visible in the table (once). */
  publish(stream: WriteStreamState, upTo: number): void {
    if (upTo <= stream.visible) return;
    stream.table.state.ingest(stream.name, stream.rows.slice(stream.visible, upTo));
    stream.visible = upTo;
  }

  /** The explicit streams of a table, in creation order. */
  list(table: Table): StreamInfo[] {
    return [...this.streams.values()]
      .filter((s) => s.table === table)
      .map((s) => ({
        name: s.name,
        type: s.type,
        rows: s.rows.length,
        finalized: s.finalized,
        committed: s.commitTimeNs !== undefined,
      }));
  }

  /**
   * Forgets a stream as BigQuery does three days after its last append: its committed rows stay in the
   * table, the name answers NOT_FOUND from then on. False when there was no such stream.
   */
  expire(name: string): boolean {
    return this.streams.delete(name);
  }

  /** Forgets the streams of a table (table deleted). */
  dropTable(table: Table): void {
    for (const [name, s] of this.streams) if (s.table === table) this.streams.delete(name);
  }
}

/** Whether a stream name is a table's `_default` stream. */
export function isDefaultStream(name: string): boolean {
  return /\/streams\/_default$/.test(name);
}
