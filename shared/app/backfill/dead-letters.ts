/**
 * Snapshot rows a backfill's sinks cannot take, under the bad-record policy (ADR-2114): a history row too
 * large for any AppendRows request is left out of the attempt's stream (`withoutOversizedHistory`, the
 * reader's own rule, ADR-2113) and, under `dead-letter`, its row gets a stream dead letter like a record's
 * (one per row, named from the job, table and key, so a retried partition finds the letter it wrote). The
 * letters are listed, counted in the status and replayed with the stream's.
 */

import type { BackfillJob, JobTable } from '../../domain/backfill/job';
import { snapshotLetterPartition, snapshotRecord } from '../../domain/backfill/snapshot-record';
import { failedRecord, type RejectedRecord, rejectionReason } from '../../domain/bad-records';
import { newDeadLetter } from '../../domain/dead-letter';
import type { HistoryRow } from '../../domain/history-rows';
import { DeadLetterStore, logDeadLettered } from '../ledger';
import { withoutOversizedHistory } from '../sinks';
import type { BackfillDeps } from './deps';

/**
 * The history rows of a batch an AppendRows request can carry; those it cannot are set aside (or, under
 * `fail`, fail the attempt with a BadRecordError naming the row).
 */
export async function appendableHistory(
  deps: Pick<BackfillDeps, 'config' | 'store' | 'now' | 'log' | 'deadLetterKey'>,
  job: BackfillJob,
  table: JobTable,
  rows: HistoryRow[],
): Promise<HistoryRow[]> {
  const destination = table.history!;
  const at = job.snapshot.readTimestamp;
  const recordOf = (row: HistoryRow) => snapshotRecord(table.schema, JSON.parse(row.keys), at, job.id);
  const { history, rejected } = withoutOversizedHistory(
    new Map([[destination, rows]]),
    recordOf,
    deps.config.onBadRecord,
  );
  if (rejected.length > 0) await setAside(deps, job, rejected);
  return history.get(destination) ?? [];
}

/** Writes one dead letter per rejected snapshot row (an existing one counts: an earlier attempt wrote it). */
async function setAside(
  deps: Pick<BackfillDeps, 'config' | 'store' | 'now' | 'log' | 'deadLetterKey'>,
  job: BackfillJob,
  rejected: RejectedRecord[],
): Promise<void> {
  // Sealed like the reader's letters, or replay would refuse them as untrusted (ADR-2305).
  const letters = new DeadLetterStore(deps.store, deps.config.pipeline, { sealKey: deps.deadLetterKey });
  for (const r of rejected) {
    const failed = failedRecord(r);
    const letter = newDeadLetter({
      pipeline: deps.config.pipeline,
      partition: { id: snapshotLetterPartition(job.id, failed.table, failed.key), epoch: 0 },
      position: job.snapshot.readTimestamp,
      now: deps.now(),
      rejected: [r],
      reason: rejectionReason(r.error),
    });
    const out = await letters.put(letter);
    logDeadLettered(deps.log, letter, r, out, { backfill: job.id });
  }
}
