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
): Promise<Readable> {
  const spanner = session.parent.parent.parent;
  const config = {
    client: 'SpannerClient',
    method,
    reqOpts: { session: session.formattedName_, ...reqOpts },
    gaxOpts: {},
    headers: { ...session.commonHeaders_ },
  };
  return new Promise((resolve, reject) =>
    spanner.prepareGapicRequest_(config, (err: unknown, requestFn: () => Readable) =>
      err ? reject(err) : resolve(requestFn()),
    ),
  );
}

/** Opens `executeStreamingSql` in `txn` with the request the client itself would send. */
export function streamingSql(txn: ReadOnlyTransaction, request: StreamingSqlRequest): Promise<Readable> {
  return gapicStream(txn.session, 'executeStreamingSql', {
    transaction: { id: txn.id },
    params: {},
    paramTypes: {},
    ...request,
  });
}

/** A whole query's result in wire form. */
export interface WireResult {
  fields: ResultField[];
  rows: WireValue[][];
}

/**
 * Runs a query strong or at exactly `at` as one single-use `executeStreamingSql` and returns every row in wire
 * form: nothing goes through the client's value objects (which shift pre-1970 fractional TIMESTAMPs by a
 * second and parse JSON into JS numbers). Parameters are encoded by the client's own encoder.
 */
export function wireQuery(
  database: Database,
  query: { sql: string; params?: Record<string, unknown>; types?: Record<string, unknown> },
  at?: Timestamp,
): Promise<WireResult> {
  const { params, paramTypes } = Snapshot.encodeParams(query as Parameters<typeof Snapshot.encodeParams>[0]);
  return singleUse(database, 'executeStreamingSql', { sql: query.sql, params, paramTypes }, at);
}

/** A read by key: the table, the columns and a `KeySet` already in protobuf form. */
export interface KeyRead {
  table: string;
  columns: string[];
  keySet: unknown;
}

/** Reads `read` strong or at exactly `at` as one single-use `streamingRead`, every row in wire form. */
export function singleUseRead(database: Database, read: KeyRead, at?: Timestamp): Promise<WireResult> {
  return singleUse(database, 'streamingRead', { ...read }, at);
}

/** Attempts of a request whose session the service no longer knows, before the error is the caller's. */
const SESSION_ATTEMPTS = 3;

/**
 * One request in a single-use read-only transaction: where a snapshot sends a BeginTransaction before its
 * read, this is the read alone. A session the service no longer knows is given back marked, and the request
 * sent on another, as the client does for its own single-use reads.
 */
async function singleUse(
  database: Database,
  method: 'executeStreamingSql' | 'streamingRead',
  request: Record<string, unknown>,
  at: Timestamp | undefined,
): Promise<WireResult> {
  const readOnly = Snapshot.encodeTimestampBounds(
    at === undefined
      ? { strong: true, returnReadTimestamp: false }
      : { readTimestamp: preciseDateOf(at), returnReadTimestamp: false },
  );
  for (let attempt = 1; ; attempt++) {
    const session = await new Promise<Session>((resolve, reject) =>
      database.sessionFactory_.getSession((err, s) => (err || !s ? reject(err) : resolve(s))),
    );
    const result: WireResult = { fields: [], rows: [] };
    try {
      const stream = await gapicStream(session, method, {
        transaction: { singleUse: { readOnly } },
        ...request,
      });
      for await (const row of wireRows(stream, (f) => result.fields.push(...f))) result.rows.push(row);
      return result;
    } catch (err) {
      if (!isSessionNotFound(err) || result.rows.length > 0 || attempt >= SESSION_ATTEMPTS) throw err;
      session.lastError = err as Session['lastError'];
    } finally {
      database.sessionFactory_.release(session);
    }
  }
}

function isSessionNotFound(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown };
  return e?.code === 5 && typeof e.message === 'string' && e.message.includes('Session not found');
}
