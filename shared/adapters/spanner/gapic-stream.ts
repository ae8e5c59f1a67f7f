/**
 * The raw `executeStreamingSql` call of a read-only transaction, through the client's own GAPIC layer, and
 * whole queries read in Spanner's wire form (ADR-1404). Not through `Snapshot#requestStream`: its wrapper
 * destroys its buffer when the call finishes, dropping the last PartialResultSets a slow consumer has not
 * read yet.
 */
import type { Readable } from 'node:stream';
import { type Database, Snapshot } from '@google-cloud/spanner';
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

/** Opens `executeStreamingSql` in `txn` with the request the client itself would send. */
export function streamingSql(txn: ReadOnlyTransaction, request: StreamingSqlRequest): Promise<Readable> {
  const spanner = txn.session.parent.parent.parent;
  const config = {
    client: 'SpannerClient',
    method: 'executeStreamingSql',
    reqOpts: {
      session: txn.session.formattedName_,
      transaction: { id: txn.id },
      params: {},
      paramTypes: {},
      ...request,
    },
    gaxOpts: {},
    headers: { ...txn.commonHeaders_ },
  };
  return new Promise((resolve, reject) =>
    spanner.prepareGapicRequest_(config, (err: unknown, requestFn: () => Readable) =>
      err ? reject(err) : resolve(requestFn()),
    ),
  );
}

/** A whole query's result in wire form. */
export interface WireResult {
  fields: ResultField[];
  rows: WireValue[][];
}

/**
 * Runs a query strong or at exactly `at` in a read-only transaction of its own and returns every row in wire
 * form: nothing goes through the client's value objects (which shift pre-1970 fractional TIMESTAMPs by a
 * second and parse JSON into JS numbers). Parameters are encoded by the client's own encoder.
 */
export async function wireQuery(
  database: Database,
  query: { sql: string; params?: Record<string, unknown>; types?: Record<string, unknown> },
  at?: Timestamp,
): Promise<WireResult> {
  const [txn] = await database.createBatchTransaction(
    at === undefined ? { strong: true } : { readTimestamp: preciseDateOf(at) },
  );
  try {
    const { params, paramTypes } = Snapshot.encodeParams(
      query as Parameters<typeof Snapshot.encodeParams>[0],
    );
    const stream = await streamingSql(txn, { sql: query.sql, params, paramTypes });
    const result: WireResult = { fields: [], rows: [] };
    for await (const row of wireRows(stream, (f) => result.fields.push(...f))) result.rows.push(row);
    return result;
  } finally {
    txn.close();
  }
}
