/**
 * Bad records (ADR-1502): a change record the pipeline cannot write to a sink — a value that cannot be
 * decoded or mapped, a schema that refuses it, rows BigQuery rejects — named by table, column, key and commit
 * timestamp, so the status and the dead letters say exactly which record and why.
 */
import type { DataChangeRecord } from './change-record';
import { DecodeError } from './client-values';
import { type ErrorKind, isFatal, SluiceError } from './errors';
import type { FailedRecord } from './ledger/entry';
import { keyValue, markedMessage } from './log-values';
import { UnrepresentableError } from './record-errors';
import { formatTimestamp } from './timestamp';

/** `SLUICE_ON_BAD_RECORD`: stop the partition (default) or set the record aside and go on. */
export type BadRecordPolicy = 'fail' | 'dead-letter';

/** Every {@link BadRecordPolicy}. */
export const BAD_RECORD_POLICIES: readonly BadRecordPolicy[] = ['fail', 'dead-letter'];

/** One record a sink could not take, and why. */
export interface RejectedRecord {
  record: DataChangeRecord;
  /** The failure, classified (permanent or bug). */
  error: SluiceError;
  /** The column the failure names, when it names one. */
  column?: string;
}

/** Rows a sink refused for their content (BigQuery row errors); `index` is into the rows written. */
export class RowsRejectedError extends SluiceError {
  override readonly name = 'RowsRejectedError';
  constructor(
    message: string,
    readonly rows: ReadonlyArray<{ index: number; message: string }>,
  ) {
    super('permanent', message);
  }
}

/** The key of a record's first mod as JSON (what identifies the row to an operator). */
export function recordKey(record: DataChangeRecord): string {
  return JSON.stringify(record.mods[0]?.keys ?? {});
}

/**
 * The column a failure names: a {@link DecodeError} path or an {@link UnrepresentableError} value's place,
 * `Table.Column` (or `Table.Column[...]`) of the record's table. Undefined when it names none.
 */
export function failedColumn(err: unknown, table: string): string | undefined {
  const path =
    err instanceof DecodeError
      ? err.path
      : err instanceof UnrepresentableError && err.reason === 'value'
        ? err.where
        : undefined;
  if (!path?.startsWith(`${table}.`)) return undefined;
  const column = /^[^.[\s]+/.exec(path.slice(table.length + 1))?.[0];
  return column && column.length > 0 ? column : undefined;
}

/**
 * True when an error met while preparing or writing a record's rows is the record's own fault: decided
 * permanent (or a bug) rather than a transient state of a service. Only such failures follow the bad-record
 * policy; anything else fails or retries the whole window.
 */
export function isRecordFailure(err: unknown): boolean {
  return isFatal(SluiceError.from(err).kind);
}

/** The ledger's description of a rejected record (for `lastError.record` and the status). */
export function failedRecord(rejected: RejectedRecord): FailedRecord {
  const { record, column } = rejected;
  return {
    table: record.tableName,
    ...(column ? { column } : {}),
    key: recordKey(record),
    commitTimestamp: record.commitTimestamp,
  };
}

/** A short label of why records were rejected, for counting dead letters: `<kind>:<error name>`. */
export function rejectionReason(error: SluiceError): string {
  const cause = error.cause;
  const name = error.name !== 'SluiceError' ? error.name : cause instanceof Error ? cause.name : 'Error';
  return `${error.kind}:${name}`;
}

/**
 * The `fail` policy's error: permanent (or bug), naming table, column, key and commit timestamp, with the
 * original message. The partition fails on it and the status shows it.
 */
export class BadRecordError extends SluiceError {
  override readonly name = 'BadRecordError';
  readonly record: FailedRecord;

  constructor(rejected: RejectedRecord) {
    const r = failedRecord(rejected);
    const where = `${r.table}${r.column ? `.${r.column}` : ''} key ${keyValue(r.key)} committed at ${formatTimestamp(r.commitTimestamp)}`;
    const kind: ErrorKind = rejected.error.kind === 'bug' ? 'bug' : 'permanent';
    // Marked (log-values.ts): the key and the cause's values are redacted in the logs and the status.
    super(kind, `bad record in ${where}: ${markedMessage(rejected.error)}`, { cause: rejected.error });
    this.record = r;
  }
}
