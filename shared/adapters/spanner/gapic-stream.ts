/**
 * Raw streaming calls through the client's own GAPIC layer, and whole results read in Spanner's wire form
 * (ADR-1404): `executeStreamingSql` in a read-only transaction, and single-use queries and reads by key.
 * Not through `Snapshot#requestStream`: its wrapper destroys its buffer when the call finishes, dropping the
 * last PartialResultSets a slow consumer has not read yet.
 */
import type { Readable } from 'node:stream';
import { type Database, type Session, Snapshot } from '@google-cloud/spanner';
import type { Timestamp } from '../../domain/timestamp';
import { preciseDateOf } from './request-options';
import { type ResultField, type WireValue, wireRows } from './wire-rows';

type ReadOnlyTransaction = ReturnType<Database['batchTransaction']>;

/** The request fields beyond the session and transaction the client fills in. */
export interface StreamingSqlRequest {
  sql: string;
  params?: unknown;
  paramTypes?: unknown;
  partitionToken?: Buffer;
  dataBoostEnabled?: boolean;
  requestOptions?: { priority?: string; requestTag?: string };
}

/** Opens `method` on `session` with the request and the headers the client itself would send. */
function gapicStream(
  session: Session,
  method: 'executeStreamingSql' | 'streamingRead',
  reqOpts: Record<string, unknown>,
  headers: Record<string, string> = session.commonHeaders_,
): Promise<Readable> {
  const spanner = session.parent.parent.parent;
  const config = {
    client: 'SpannerClient',
    method,
    reqOpts: { session: session.formattedName_, ...reqOpts },
    gaxOpts: {},
    headers: { ...headers },
  };
  return new Promise((resolve, reject) =>
    spanner.prepareGapicRequest_(config, (err: unknown, requestFn: () => Readable) =>
      err ? reject(err) : resolve(requestFn()),
    ),
  );
}

/** Opens `executeStreamingSql` in `txn` with the request the client itself would send. */
export function streamingSql(txn: ReadOnlyTransaction, request: StreamingSqlRequest): Promise<Readable> {
  return gapicStream(
    txn.session,
    'executeStreamingSql',
    { transaction: { id: txn.id }, params: {}, paramTypes: {}, ...request },
    txn.commonHeaders_,
  );
}

/** A whole query's result in wire form. */
export interface WireResult {
  fields: ResultField[];
  rows: WireValue[][];
}

/** A query in the client's form: parameters and their types as `Database#run` takes them. */
export interface ClientQuery {
  sql: string;
  params?: Record<string, unknown>;
  types?: Record<string, unknown>;
}

/**
 * Runs a query strong or at exactly `at` as one single-use `executeStreamingSql` and returns every row in wire
 * form: nothing goes through the client's value objects (which shift pre-1970 fractional TIMESTAMPs by a
 * second and parse JSON into JS numbers). Parameters are encoded by the client's own encoder.
 */
export function wireQuery(database: Database, query: ClientQuery, at?: Timestamp): Promise<WireResult> {
  return collect((onFields) => wireQueryRows(database, query, { at }, onFields));
}

/** How a single-use query is sent. */
export interface SingleUseOptions {
  /** Exactly this timestamp; strong when absent. */
  at?: Timestamp;
  requestOptions?: { priority?: string; requestTag?: string };
  /** Ends the rows (no error) and cancels the call. */
  signal?: AbortSignal;
}

/** The rows of a single-use query in wire form, as they arrive; `onFields` gets the columns first. */
export function wireQueryRows(
  database: Database,
  query: ClientQuery,
  options: SingleUseOptions,
  onFields: (fields: ResultField[]) => void = () => {},
): AsyncIterable<WireValue[]> {
  const { params, paramTypes } = Snapshot.encodeParams(query as Parameters<typeof Snapshot.encodeParams>[0]);
  const request = {
    sql: query.sql,
    params,
    paramTypes,
    ...(options.requestOptions ? { requestOptions: options.requestOptions } : {}),
  };
  return singleUseRows(database, 'executeStreamingSql', request, options, onFields);
}

/** A read by key: the table, the columns and a `KeySet` already in protobuf form. */
export interface KeyRead {
  table: string;
  columns: string[];
  keySet: unknown;
}

/** Reads `read` strong or at exactly `at` as one single-use `streamingRead`, every row in wire form. */
export function singleUseRead(database: Database, read: KeyRead, at?: Timestamp): Promise<WireResult> {
  return collect((onFields) => singleUseRows(database, 'streamingRead', { ...read }, { at }, onFields));
}

/** Every row of `rows` and the columns of the attempt that gave them. */
async function collect(
  rows: (onFields: (fields: ResultField[]) => void) => AsyncIterable<WireValue[]>,
): Promise<WireResult> {
  const result: WireResult = { fields: [], rows: [] };
  for await (const row of rows((fields) => (result.fields = fields))) result.rows.push(row);
  return result;
}

/** Attempts of a request whose session the service no longer knows, before the error is the caller's. */
const SESSION_ATTEMPTS = 3;

/**
 * One request in a single-use read-only transaction: where a snapshot sends a BeginTransaction before its
 * read, this is the read alone. A session the service no longer knows is given back marked, and the request
 * sent on another before any row arrived, as the client does for its own single-use reads. A stream broken
 * later fails the rows: the caller retries from what it has kept. Back-pressure is the stream's own.
 */
async function* singleUseRows(
  database: Database,
  method: 'executeStreamingSql' | 'streamingRead',
  request: Record<string, unknown>,
  options: SingleUseOptions,
  onFields: (fields: ResultField[]) => void,
): AsyncIterable<WireValue[]> {
  const { at, signal } = options;
  const readOnly = Snapshot.encodeTimestampBounds(
    at === undefined
      ? { strong: true, returnReadTimestamp: false }
      : { readTimestamp: preciseDateOf(at), returnReadTimestamp: false },
  );
  for (let attempt = 1; ; attempt++) {
    if (signal?.aborted) return;
    const session = await new Promise<Session>((resolve, reject) =>
      database.sessionFactory_.getSession((err, s) => (err || !s ? reject(err) : resolve(s))),
    );
    let stream: Readable | undefined;
    let rows = 0;
    const cancel = () => stream?.destroy();
    signal?.addEventListener('abort', cancel, { once: true });
    try {
      stream = await gapicStream(session, method, { transaction: { singleUse: { readOnly } }, ...request });
      if (signal?.aborted) return;
      for await (const row of wireRows(stream, onFields)) {
        rows++;
        yield row;
      }
      return;
    } catch (err) {
      if (signal?.aborted) return;
      if (!isSessionNotFound(err) || rows > 0 || attempt >= SESSION_ATTEMPTS) throw err;
      session.lastError = err as Session['lastError'];
    } finally {
      signal?.removeEventListener('abort', cancel);
      if (stream && !stream.destroyed) stream.destroy();
      database.sessionFactory_.release(session);
    }
  }
}

function isSessionNotFound(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown };
  return e?.code === 5 && typeof e.message === 'string' && e.message.includes('Session not found');
}
