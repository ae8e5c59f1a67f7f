/**
 * The AppendRows bidi stream: one response per request, in order. Handles writer schemas on any request,
 * offsets on explicit streams, CDC rules on `_default`, row errors, the request size limit, schema-update
 * notices and the fault rules (`AppendRows` per request, `AppendRowsStream` per connection).
 */
import * as grpc from '@grpc/grpc-js';
import { type FaultInjector, sleep } from '../common/faults';
import type { Table } from './catalog';
import { checkWriterSchema, compileWriterSchema, decodeRows, type WriterSchema } from './decode';
import { encodeStorageError } from './protos';
import { toStorageFields } from './schema';
import type { IncomingRow } from './table-state';
import { Code, isDefaultStream, WriteError, type WriteStreams } from './write-streams';

/** Limits and hooks of the AppendRows handler. */
export interface AppendRowsOptions {
  streams: WriteStreams;
  faults: FaultInjector;
  maxRequestBytes: number;
  /** Registers a live call so `stop()` can end it. */
  track(call: grpc.ServerDuplexStream<AppendRequest, unknown>): () => void;
}

/** The AppendRowsRequest fields the emulator reads (names as the loader decodes them). */
export interface AppendRequest {
  writeStream?: string;
  offset?: { value?: string };
  protoRows?: { writerSchema?: { protoDescriptor?: unknown }; rows?: { serializedRows?: Uint8Array[] } };
  arrowRows?: unknown;
  missingValueInterpretations?: Record<string, string>;
  defaultMissingValueInterpretation?: string;
}

interface Connection {
  stream?: string;
  schemaKey?: string;
  schema?: WriterSchema;
  schemaVersion?: number;
  cdc?: boolean;
  answered: number;
  endAfter?: { items: number; code: number; message: string };
}

const ROW_ERRORS_MESSAGE =
  'Errors found while processing rows. Please refer to the row_errors field for details. The list may not be complete because of the size limitations.';

/** Builds the AppendRows handler. */
export function appendRowsHandler(
  opts: AppendRowsOptions,
): grpc.handleBidiStreamingCall<AppendRequest, unknown> {
  return (call) => {
    const untrack = opts.track(call);
    const conn: Connection = { answered: 0 };
    const rule = opts.faults.take('AppendRowsStream');
    if (rule?.afterItems !== undefined) {
      conn.endAfter = {
        items: rule.afterItems,
        code: rule.code ?? grpc.status.UNAVAILABLE,
        message: rule.message ?? 'Connection reset by the emulator',
      };
    }
    let chain = Promise.resolve();
    let ended = false;
    const end = (status?: Partial<grpc.StatusObject>) => {
      if (ended) return;
      ended = true;
      untrack();
      if (status) call.emit('error', status);
      else call.end();
    };
    call.on('data', (req: AppendRequest) => {
      chain = chain.then(() => (ended ? undefined : handleOne(opts, conn, req, call, end)));
    });
    call.on('end', () => {
      chain = chain.then(() => end());
    });
    call.on('error', () => end());
    call.on('cancelled', () => end());
  };
}

async function handleOne(
  opts: AppendRowsOptions,
  conn: Connection,
  req: AppendRequest,
  call: grpc.ServerDuplexStream<AppendRequest, unknown>,
  end: (status?: Partial<grpc.StatusObject>) => void,
): Promise<void> {
  if (conn.endAfter && conn.answered >= conn.endAfter.items) {
    end({ code: conn.endAfter.code, details: conn.endAfter.message });
    return;
  }
  conn.stream = req.writeStream || conn.stream;
  const name = conn.stream ?? '';
  // A rule's `target` picks requests by write stream name (e.g. one table's streams), its `afterItems` lets
  // that many requests of a connection be answered first (a failure after acknowledged appends).
  const fault = opts.faults.take('AppendRows', name, conn.answered);
  await sleep(fault?.delayMs ?? 0);
  if (fault?.drop) {
    end({ code: grpc.status.UNAVAILABLE, details: 'Connection dropped by the emulator' });
    return;
  }
  try {
    const response = fault?.code
      ? inBand(fault.code, fault.message ?? 'Injected failure', name)
      : append(opts, conn, req, name);
    conn.answered++;
    call.write(response);
  } catch (err) {
    if (!(err instanceof WriteError)) throw err;
    const metadata = new grpc.Metadata();
    if (err.storageCode !== undefined) {
      metadata.set(
        'google.cloud.bigquery.storage.v1.storageerror-bin',
        encodeStorageError(err.storageCode, err.entity, err.storageMessage ?? err.message),
      );
    }
    end({ code: err.code, details: err.message, metadata });
  }
}

function inBand(
  code: number,
  message: string,
  stream: string,
  rowErrors: unknown[] = [],
): Record<string, unknown> {
  return {
    error: { code, message: `${message} Entity: ${stream}`, details: [] },
    rowErrors,
    writeStream: stream,
  };
}

/** Answers one request; WriteErrors thrown from here end the connection. */
function append(
  opts: AppendRowsOptions,
  conn: Connection,
  req: AppendRequest,
  name: string,
): Record<string, unknown> {
  if (!name) throw new WriteError(Code.INVALID_ARGUMENT, 'The first request must specify a write_stream');
  const explicit = opts.streams.get(name);
  const table = explicit?.table ?? opts.streams.tableOf(name);
  if (req.arrowRows) return inBand(Code.INVALID_ARGUMENT, 'The emulator accepts only proto rows.', name);
  compileIfNew(conn, req, table);
  const serialized = req.protoRows?.rows?.serializedRows ?? [];
  const size = serialized.reduce((n, r) => n + r.length, 0);
  if (size > opts.maxRequestBytes) {
    return inBand(
      Code.INVALID_ARGUMENT,
      `AppendRows request too large: ${size} limit ${opts.maxRequestBytes}.`,
      name,
    );
  }
  if (serialized.length === 0) return inBand(Code.INVALID_ARGUMENT, 'Rows must be specified.', name);
  const updated = schemaNotice(conn, table);
  const { rows, failures } = decodeRows(conn.schema!, table, serialized, req);
  if (failures.length > 0) {
    const rowErrors = failures.map((f) => ({
      index: String(f.index),
      code: 'FIELDS_ERROR',
      message: f.message,
    }));
    return { ...inBand(Code.INVALID_ARGUMENT, ROW_ERRORS_MESSAGE, name, rowErrors), ...updated };
  }
  const cdcError = checkCdc(conn, rows, table, explicit === undefined);
  if (cdcError) return { ...inBand(Code.INVALID_ARGUMENT, cdcError, name), ...updated };
  if (!explicit) {
    if (req.offset?.value !== undefined) {
      return inBand(Code.INVALID_ARGUMENT, 'Offset is not allowed on the default stream.', name);
    }
    opts.streams.ingestDefault(table, name, rows);
    return { appendResult: {}, writeStream: name, rowErrors: [], ...updated };
  }
  let first: number;
  try {
    first = opts.streams.checkOffset(
      explicit,
      req.offset?.value === undefined ? undefined : BigInt(req.offset.value),
    );
  } catch (err) {
    if (err instanceof WriteError && (err.code === Code.ALREADY_EXISTS || err.code === Code.OUT_OF_RANGE)) {
      return {
        error: { code: err.code, message: err.message, details: [] },
        rowErrors: [],
        writeStream: name,
      };
    }
    throw err;
  }
  opts.streams.append(explicit, rows);
  return { appendResult: { offset: { value: String(first) } }, writeStream: name, rowErrors: [], ...updated };
}

function compileIfNew(conn: Connection, req: AppendRequest, table: Table): void {
  const descriptor = req.protoRows?.writerSchema?.protoDescriptor;
  if (descriptor) {
    const key = JSON.stringify(descriptor);
    if (key !== conn.schemaKey) {
      const schema = compileWriterSchema(descriptor);
      checkWriterSchema(schema, table);
      conn.schema = schema;
      conn.schemaKey = key;
    }
  }
  if (!conn.schema)
    throw new WriteError(Code.INVALID_ARGUMENT, 'The first request must carry a writer_schema');
  conn.schemaVersion ??= table.schemaVersion;
}

/** `updated_schema` once per connection after the table's schema changed under it. */
function schemaNotice(conn: Connection, table: Table): Record<string, unknown> {
  if (conn.schemaVersion === undefined || conn.schemaVersion >= table.schemaVersion) return {};
  conn.schemaVersion = table.schemaVersion;
  return { updatedSchema: { fields: toStorageFields(table.fields) } };
}

/** CDC rules: UPSERT/DELETE only on `_default` of a table with a primary key, never mixed on a connection. */
function checkCdc(
  conn: Connection,
  rows: IncomingRow[],
  table: Table,
  isDefault: boolean,
): string | undefined {
  const cdc = rows.map((r) => r.changeType !== 'INSERT');
  if (!cdc.some(Boolean)) {
    if (conn.cdc === true) return mixMessage('INSERT');
    conn.cdc = false;
    return undefined;
  }
  const first = rows.find((r) => r.changeType !== 'INSERT')!.changeType;
  if (!isDefault) return `The given value is not a valid CHANGE_TYPE in insert mode: ${first}`;
  if (!table.primaryKey()) {
    return `The given value is not a valid CHANGE_TYPE: ${first}. UPSERT and DELETE require a table with a primary key.`;
  }
  if (conn.cdc === false || cdc.some((c) => !c)) return mixMessage('INSERT');
  conn.cdc = true;
  return undefined;
}

function mixMessage(kind: string): string {
  return `The given value is not a valid CHANGE_TYPE: ${kind}. Rows with UPSERT or DELETE cannot be mixed with other rows on one connection.`;
}

/** Whether a stream name is `_default` (re-exported for callers of this module). */
export { isDefaultStream };
