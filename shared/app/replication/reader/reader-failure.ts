/**
 * How a reader task that failed is recorded and answered (ADR-602, amended by ADR-1501): a conflict is a no-op
 * (someone else carries the work on), a retryable failure releases the lease with the error recorded and
 * answers 503/429, a permanent one (or a bug) fails the partition and answers 200. Either way the position
 * first moves to the boundary every sink acknowledged before the failure, with the history cursors that
 * belong to it (one compare-and-swap): the retry starts after what was already written instead of writing it
 * again.
 */
import { BadRecordError } from '../../../domain/bad-records';
import { httpStatusFor, SluiceError } from '../../../domain/errors';
import {
  advancePosition,
  failPartition,
  type LastError,
  type PartitionEntry,
  releaseLease,
  type Transition,
} from '../../../domain/ledger';
import type { Logger } from '../../../domain/log';
import { keyValue, type LogValues, markedMessage, redact, shownKey } from '../../../domain/log-values';
import { formatTimestamp, type Timestamp } from '../../../domain/timestamp';
import type { LedgerStore } from '../../ledger';
import type { ReaderTask } from '../common';
import type { WindowPartial } from './window-run';

/** What a task came to, and the HTTP status to answer Cloud Tasks with. */
export interface TaskOutcome {
  status: number;
  outcome: 'window' | 'finished' | 'noop' | 'failed' | 'retry';
  detail: string;
}

/** A task that did nothing (duplicate, stale, lost race). */
export const noop = (detail: string): TaskOutcome => ({ status: 200, outcome: 'noop', detail });

/**
 * The error as the ledger records it: what the status shows, so redacted as the logs are (`SLUICE_LOG_VALUES`,
 * ADR-2307) — the record's key as its hash under `none`; the dead letter keeps the whole record.
 */
function recordedError(e: SluiceError, err: unknown, at: Timestamp, values: LogValues): LastError {
  const record = err instanceof BadRecordError ? err.record : undefined;
  return {
    kind: e.kind,
    message: redact(markedMessage(e), values),
    at,
    ...(record ? { record: { ...record, key: shownKey(record.key, values) } } : {}),
  };
}

/** Maps a failure to an outcome: retryable → 503/429 (lease released), permanent → recorded, 200. */
export async function recordTaskFailure(
  ctx: { ledger: LedgerStore; now: Timestamp; logValues?: LogValues },
  failure: {
    err: unknown;
    task: ReaderTask;
    holder: string;
    leased: PartitionEntry | undefined;
    partial?: WindowPartial;
  },
  log: Logger,
): Promise<TaskOutcome> {
  const { err, task, holder, leased, partial } = failure;
  const e = SluiceError.from(err, `partition ${task.partition}`);
  const error = recordedError(e, err, ctx.now, ctx.logValues ?? 'none');
  const record = err instanceof BadRecordError ? err.record : undefined;
  if (e.kind === 'conflict') {
    log.warn('task.conflict', { reason: e.message });
    return noop(e.message);
  }
  // `acknowledged`: the boundary the failed window's sinks had acknowledged, where the retry starts.
  log.error('task.failed', e, {
    retryable: e.kind === 'retryable',
    ...(partial?.acked ? { acknowledged: formatTimestamp(partial.acked.at) } : {}),
  });
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
        ? failPartition(entry, { holder, error, writer, ...acknowledged(partial) })
        : release(entry, { holder, writer, error, partial }),
    )
    .then((out) => {
      // The event the partition-failed alert counts (infra/log-contract.ts): once per partition stopped.
      if (permanent && out.kind === 'written')
        log.error('partition.failed', e, {
          partition: task.partition,
          ...(record ? { table: record.table, key: keyValue(record.key) } : {}),
          ...(record?.column ? { column: record.column } : {}),
        });
    })
    .catch((recordErr: unknown) => log.error('task.record-failed', recordErr));
  return permanent
    ? { status: 200, outcome: 'failed', detail: e.message }
    : {
        status: httpStatusFor('retryable', { rateLimited: e.rateLimited }),
        outcome: 'retry',
        detail: e.message,
      };
}

/** The acknowledged boundary of a failed window, as transition arguments. */
function acknowledged(partial: WindowPartial | undefined) {
  if (!partial?.acked) return {};
  return { boundary: partial.acked, history: partial.history, records: partial.uncounted };
}

/** Moves to the acknowledged boundary (when there is one past the position), then releases with the error. */
function release(
  entry: PartitionEntry,
  args: { holder: string; writer: string; error: LastError; partial: WindowPartial | undefined },
): Transition {
  const { holder, writer, error, partial } = args;
  let next = entry;
  if (partial?.acked) {
    const moved = advancePosition(entry, {
      holder,
      writer,
      ...acknowledged(partial),
      boundary: partial.acked,
    });
    // A move refused (not the holder, behind the position) must not lose the failure: release where it is.
    if (moved.ok) next = moved.entry;
  }
  return releaseLease(next, { holder, writer, error });
}
