/**
 * The `record.dead-lettered` log line, one shape for every path that sets a record aside (a window's
 * records, a backfill's rows): the letter, the record's table, column, key and commit timestamp, the reason
 * and the error. Key and error are marked, so the log redacts them per `SLUICE_LOG_VALUES` (ADR-2307); the
 * letter itself keeps the whole record.
 */
import { failedRecord, type RejectedRecord } from '../../domain/bad-records';
import type { DeadLetter } from '../../domain/dead-letter';
import type { Logger } from '../../domain/log';
import { keyValue, markedMessage } from '../../domain/log-values';
import { formatTimestamp } from '../../domain/timestamp';

/** Logs one rejected record set aside in `letter`; `out` is what the put answered. */
export function logDeadLettered(
  log: Logger,
  letter: DeadLetter,
  r: RejectedRecord,
  out: 'created' | 'exists',
  extra: Record<string, string> = {},
): void {
  const failed = failedRecord(r);
  log.warn('record.dead-lettered', {
    deadLetter: letter.id,
    ...extra,
    table: failed.table,
    records: 1,
    reason: letter.reason,
    column: failed.column,
    key: keyValue(failed.key),
    commitTimestamp: formatTimestamp(failed.commitTimestamp),
    error: markedMessage(r.error),
    ...(out === 'exists' ? { note: 'already written by an earlier attempt' } : {}),
  });
}
