/**
 * How a reader task that failed is recorded and answered (ADR-602): a conflict is a no-op (someone else
 * carries the work on), a retryable failure releases the lease with the error recorded and answers 503/429,
 * a permanent one fails the partition and answers 200. The history cursors stay as the last checkpoint wrote
 * them, with the position they belong to: the retry re-reads from there, and rows it re-sends are refused by
 * BigQuery as already written (ADR-1601).
 */
import { httpStatusFor, SluiceError } from '../domain/errors';
import { failPartition, type PartitionEntry, releaseLease } from '../domain/ledger';
import type { Logger } from '../domain/log';
import type { Timestamp } from '../domain/timestamp';
import type { LedgerStore } from './ledger-store';
import type { ReaderTask } from './reader-task';

/** What a task came to, and the HTTP status to answer Cloud Tasks with. */
export interface TaskOutcome {
  status: number;
  outcome: 'window' | 'finished' | 'noop' | 'failed' | 'retry';
  detail: string;
}

/** A task that did nothing (duplicate, stale, lost race). */
export const noop = (detail: string): TaskOutcome => ({ status: 200, outcome: 'noop', detail });

/** Maps a failure to an outcome: retryable → 503/429 (lease released), permanent → recorded, 200. */
export async function recordTaskFailure(
  ctx: { ledger: LedgerStore; now: Timestamp },
  failure: { err: unknown; task: ReaderTask; holder: string; leased: PartitionEntry | undefined },
  log: Logger,
): Promise<TaskOutcome> {
  const { err, task, holder, leased } = failure;
  const e = SluiceError.from(err, `partition ${task.partition}`);
  const error = { kind: e.kind, message: e.message, at: ctx.now };
  if (e.kind === 'conflict') {
    log.warn('task.conflict', { reason: e.message });
    return noop(e.message);
  }
  log.error('task.failed', e, { retryable: e.kind === 'retryable' });
  if (!leased) {
    // Nothing is held (the ledger itself failed, or the body names nothing we can record on).
    return {
      status: httpStatusFor(e.kind, { rateLimited: e.rateLimited }),
      outcome: e.kind === 'retryable' ? 'retry' : 'failed',
      detail: e.message,
    };
  }
  const permanent = e.kind !== 'retryable';
  await ctx.ledger
    .updatePartition(task.epoch, task.partition, (entry, writer) =>
      permanent
        ? failPartition(entry, { holder, error, writer })
        : releaseLease(entry, { holder, writer, error }),
    )
    .catch((recordErr: unknown) => log.error('task.record-failed', recordErr));
  return permanent
    ? { status: 200, outcome: 'failed', detail: e.message }
    : {
        status: httpStatusFor('retryable', { rateLimited: e.rateLimited }),
        outcome: 'retry',
        detail: e.message,
      };
}
