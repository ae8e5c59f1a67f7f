/**
 * Text and parameters of a change-stream query, for both dialects. The stream name is spliced into the SQL
 * (a function name cannot be a parameter), so it is validated as a plain identifier first: nothing from
 * configuration can inject SQL.
 */
import type { Dialect } from './change-record';
import { compareTimestamps, type Timestamp, toSpannerParam } from './timestamp';

/** A change-stream name that is a valid, unquoted Spanner identifier. */
export type StreamName = string & { readonly __streamName: unique symbol };

const IDENTIFIER = /^[A-Za-z][A-Za-z0-9_]{0,127}$/;

/**
 * Validates a change-stream name: a letter, then letters, digits or underscores, at most 128 characters.
 * @throws Error naming the rejected value.
 */
export function parseStreamName(name: string): StreamName {
  if (!IDENTIFIER.test(name)) {
    throw new Error(
      `invalid change stream name ${JSON.stringify(name)}: expected a letter followed by up to 127 letters, digits or underscores`,
    );
  }
  return name as StreamName;
}

/** One window of one partition (or, with a NULL token, the initial query). */
export interface ChangeStreamQueryInput {
  dialect: Dialect;
  stream: StreamName;
  /** Inclusive. */
  start: Timestamp;
  /** Inclusive; `null` reads until the partition ends. */
  end: Timestamp | null;
  /** `null` for the initial query, which returns the first partitions. */
  partitionToken: string | null;
  heartbeatMillis: number;
}

/** Parameter type names as the Spanner client's `types` option takes them (needed for NULL values). */
export type ParamType = 'timestamp' | 'string' | 'int64';

/**
 * What to pass to `database.runStream({sql, params, types}, {strong: true})`. Timestamps are RFC 3339 with
 * nine fractional digits (the client sends a string as is, and Spanner parses it exactly); the heartbeat
 * is a decimal string.
 */
export interface SpannerQuery {
  sql: string;
  params: Record<string, string | null>;
  types: Record<string, ParamType>;
}

/**
 * Builds the change-stream query. GoogleSQL uses named arguments; PostgreSQL calls
 * `"spanner"."read_json_<stream>"($1, $2, $3, $4, null)` whose result is read by column index.
 * @throws Error when the heartbeat is not a positive integer or the window is empty.
 */
export function changeStreamQuery(input: ChangeStreamQueryInput): SpannerQuery {
  const stream = parseStreamName(input.stream);
  if (!Number.isSafeInteger(input.heartbeatMillis) || input.heartbeatMillis <= 0) {
    throw new Error(`invalid heartbeat ${input.heartbeatMillis} ms: expected a positive integer`);
  }
  if (input.end !== null && compareTimestamps(input.start, input.end) > 0) {
    throw new Error('invalid change stream window: start is after end');
  }
  const values = [
    toSpannerParam(input.start),
    input.end === null ? null : toSpannerParam(input.end),
    input.partitionToken,
    String(input.heartbeatMillis),
  ];
  const types: ParamType[] = ['timestamp', 'timestamp', 'string', 'int64'];
  if (input.dialect === 'POSTGRESQL') {
    const names = ['p1', 'p2', 'p3', 'p4'];
    return {
      sql: `SELECT * FROM "spanner"."read_json_${stream}"($1, $2, $3, $4, null)`,
      params: Object.fromEntries(names.map((n, i) => [n, values[i]!])),
      types: Object.fromEntries(names.map((n, i) => [n, types[i]!])),
    };
  }
  const names = ['startTimestamp', 'endTimestamp', 'partitionToken', 'heartbeatMilliseconds'];
  return {
    sql:
      `SELECT ChangeRecord FROM READ_${stream}(start_timestamp => @startTimestamp, ` +
      'end_timestamp => @endTimestamp, partition_token => @partitionToken, ' +
      'heartbeat_milliseconds => @heartbeatMilliseconds)',
    params: Object.fromEntries(names.map((n, i) => [n, values[i] ?? null])),
    types: Object.fromEntries(names.map((n, i) => [n, types[i]!])),
  };
}
