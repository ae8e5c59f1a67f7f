/**
 * The seam between the Spanner emulator's core (sessions, SQL, multi-version storage, transactions) and its
 * change-stream engine. The core calls these hooks; the change-stream engine implements them. Values cross
 * the seam in Spanner's wire form (the JSON form of `google.protobuf.Value` that Spanner sends): INT64 and
 * NUMERIC as decimal strings, FLOAT32/FLOAT64 as numbers or "NaN" / "Infinity" / "-Infinity", BOOL as
 * booleans, STRING as strings, BYTES as base64, DATE as `YYYY-MM-DD`, TIMESTAMP as RFC 3339 with nine
 * fractional digits and `Z`, JSON as its text, ARRAY as arrays, NULL as null.
 */

/** Wire form of one value (see the module comment). */
export type WireValue = null | boolean | number | string | WireValue[];

/**
 * gRPC status codes (values of `google.rpc.Code`). The emulator answers with the same table the domain
 * classifies errors by, so an emulated failure and its classification cannot drift apart.
 */
export { GrpcCode as Code } from '../../../shared/domain/errors';

/** An error the emulator answers with: a gRPC status code and the service's message. */
export class SpannerError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'SpannerError';
  }
}

/** `google.spanner.v1.Type` in its plain-object form (as proto-loader uses it, enums as strings). */
export interface SpannerTypeJson {
  code: string;
  arrayElementType?: SpannerTypeJson;
  structType?: { fields: Array<{ name: string; type: SpannerTypeJson }> };
  typeAnnotation?: string;
  protoTypeFqn?: string;
}

/** One column of a user table. */
export interface ColumnInfo {
  name: string;
  type: SpannerTypeJson;
  /** 1-based position in the table definition. */
  ordinalPosition: number;
  isPrimaryKey: boolean;
  nullable: boolean;
  /** A generated column (stored or not): change streams never track it unless it is a key column. */
  generated?: boolean;
}

/** One user table, as the change-stream engine needs to know it. */
export interface TableInfo {
  name: string;
  columns: ColumnInfo[];
  /** Primary-key column names in key order. */
  primaryKey: string[];
}

/** Read access to the current schema, for the change-stream engine. */
export interface SchemaView {
  dialect: 'GOOGLE_STANDARD_SQL' | 'POSTGRESQL';
  table(name: string): TableInfo | undefined;
  tables(): TableInfo[];
}

/** One row changed by a committed transaction (after coalescing the transaction's mutations per row). */
export interface RowChange {
  table: string;
  modType: 'INSERT' | 'UPDATE' | 'DELETE';
  /** Primary-key values. */
  keys: Record<string, WireValue>;
  /** Full row before the commit (null for INSERT). */
  oldRow: Record<string, WireValue> | null;
  /** Full row after the commit (null for DELETE). */
  newRow: Record<string, WireValue> | null;
  /** Non-key columns the transaction wrote (for UPDATE: the columns named by the mutation or DML). */
  writtenColumns: string[];
}

/** One committed read-write transaction, in the order its changes were applied. */
export interface CommitEvent {
  /** Commit timestamp, nanoseconds since the epoch; strictly increasing across commits. */
  commitTimestampNs: bigint;
  transactionTag: string;
  changes: RowChange[];
  schema: SchemaView;
  /**
   * The transaction asked not to be recorded (`exclude_txn_from_change_streams`): streams with
   * `allow_txn_exclusion = true` skip it, every other stream records it.
   */
  excludedFromChangeStreams?: boolean;
}

/** A schema change the change-stream engine may refuse (FAILED_PRECONDITION) before the core applies it. */
export type SchemaChange =
  | { kind: 'dropTable'; table: string }
  | { kind: 'dropColumn'; table: string; column: string };

/** Result of a streaming query produced outside the SQL engine. */
export interface StreamingQuery {
  /** `google.spanner.v1.ResultSetMetadata` in plain-object form (`rowType.fields`). */
  metadata: { rowType: { fields: Array<{ name: string; type: SpannerTypeJson }> } };
  /** Rows in wire form; the core turns them into PartialResultSets (each with a resume token). */
  rows: AsyncIterable<WireValue[]>;
}

/** Everything the core needs to know about an ExecuteStreamingSql request to route it. */
export interface QueryRequest {
  sql: string;
  /** Parameter values in wire form, keyed by name without `@` / `$` (PostgreSQL: `p1`, `p2`, …). */
  params: Record<string, WireValue>;
  paramTypes: Record<string, SpannerTypeJson>;
  /** The request's transaction selector in plain-object form, or undefined when none was sent. */
  transaction: unknown;
  /** true for ExecuteStreamingSql, false for ExecuteSql. */
  streaming: boolean;
  schema: SchemaView;
  /** Aborted when the client cancels the call. */
  signal: AbortSignal;
}

/**
 * Implemented by the change-stream engine. The core calls `applyDdl` for every DDL statement before its own
 * parser, `onCommit` after every successful commit (inside the commit's critical section, so events arrive
 * in commit-timestamp order), `routeQuery` for every query, and `informationSchema` when a change-stream
 * INFORMATION_SCHEMA view is read.
 */
export interface ChangeStreamHooks {
  /** Returns true when the statement was a change-stream DDL statement and has been applied. */
  applyDdl(statement: string, schema: SchemaView, nowNs: bigint): boolean;
  /** Throws when a stream forbids the change (a table or column it tracks explicitly cannot be dropped). */
  checkSchemaChange?(change: SchemaChange, schema: SchemaView): void;
  /** Records the change records a commit produces. */
  onCommit(event: CommitEvent): void;
  /** Returns a streaming query when `sql` is a change-stream TVF query, or undefined to let the core run it. */
  routeQuery(request: QueryRequest): StreamingQuery | undefined;
  /**
   * Rows of the change-stream INFORMATION_SCHEMA views (`CHANGE_STREAMS`, `CHANGE_STREAM_TABLES`,
   * `CHANGE_STREAM_COLUMNS`, `CHANGE_STREAM_OPTIONS`), column name → wire value, or undefined for other views.
   */
  informationSchema(view: string): Array<Record<string, WireValue>> | undefined;
  /** The emulated DDL of change streams, for GetDatabaseDdl. */
  ddlStatements(): string[];
}
