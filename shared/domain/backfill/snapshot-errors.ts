/**
 * A snapshot older than the database's `version_retention_period` cannot be read: Spanner answers
 * FAILED_PRECONDITION. Retrying never helps, so the job fails with a message that says what happened and
 * how to raise the retention, in the database's dialect.
 */
import type { Dialect } from '../change-record';
import { SluiceError } from '../errors';
import { formatTimestamp, type Timestamp } from '../timestamp';

const FAILED_PRECONDITION = 9;
const TOO_OLD = /version[_ ]retention|too old|earliest version/i;

function isTooOldStatus(err: object): boolean {
  const { code, message, details } = err as { code?: unknown; message?: unknown; details?: unknown };
  const text = `${typeof message === 'string' ? message : ''} ${typeof details === 'string' ? details : ''}`;
  return (code === FAILED_PRECONDITION || code === 'FAILED_PRECONDITION') && TOO_OLD.test(text);
}

/**
 * True when `err` is Spanner refusing a read timestamp older than the version retention, or an error
 * caused by that (adapters wrap the client's error, keeping it as `cause`).
 */
export function isSnapshotTooOld(err: unknown): boolean {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    if (isTooOldStatus(current)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** The statement that raises the retention (7 days is the maximum Spanner allows). */
export function raiseRetentionStatement(dialect: Dialect, database: string): string {
  return dialect === 'POSTGRESQL'
    ? `ALTER DATABASE "${database}" SET spanner.version_retention_period = '7d'`
    : `ALTER DATABASE \`${database}\` SET OPTIONS (version_retention_period = '7d')`;
}

/** The permanent error a job fails with when its snapshot has expired. */
export function snapshotTooOldError(
  snapshotTimestamp: Timestamp,
  dialect: Dialect,
  database: string,
  cause?: unknown,
): SluiceError {
  return new SluiceError(
    'permanent',
    `snapshot at ${formatTimestamp(snapshotTimestamp)} is older than the database's version_retention_period, ` +
      'so Spanner can no longer read it. Start a new backfill (a new snapshot), and to let long backfills finish ' +
      `raise the retention (up to 7 days) with: ${raiseRetentionStatement(dialect, database)}`,
    { cause },
  );
}
