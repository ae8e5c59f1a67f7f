/**
 * Progress inside a window, and the transitions that record it: advancing the position, finishing on a
 * child-partitions record, failing.
 *
 * Records of one partition arrive in commit-timestamp order, but several records may share a timestamp, so
 * the position may only be set to a *boundary*: a timestamp all of whose records have been seen. A
 * {@link Boundary} can only be obtained from a {@link WindowProgress}, which is how the type system keeps the
 * position on boundaries.
 */
import { type ChangeRecord, type ChildPartition, recordTimestamp } from '../change-record';
import { SluiceError } from '../errors';
import { addNanos, formatTimestamp, maxTimestamp, type Timestamp } from '../timestamp';
import type { Window } from './window';

declare const boundaryBrand: unique symbol;

/** A timestamp of a partition at which every record at or before it has been seen. */
export interface Boundary {
  readonly partitionId: string;
  readonly at: Timestamp;
  readonly [boundaryBrand]: true;
}

/** How a partition ended: the start timestamp of its child-partitions record(s) and the children. */
export interface PartitionEnd {
  at: Timestamp;
  children: ChildPartition[];
}

/** What a reader has seen of its window so far. Immutable; {@link observe} returns the next one. */
export interface WindowProgress {
  readonly window: Window;
  /** Every record with commit timestamp ≤ this has been seen. */
  readonly seenThrough: Timestamp;
  /** Timestamp of the last data record, while more records of that timestamp may follow. */
  readonly open: Timestamp | null;
  /** Set once a child-partitions record arrived: the partition ends there. */
  readonly end: PartitionEnd | null;
  /** Data-change records seen. */
  readonly records: number;
}

/** Progress at the start of a window: nothing seen beyond `from − 1 ns` (the entry's position). */
export function startWindow(window: Window): WindowProgress {
  return { window, seenThrough: addNanos(window.from, -1n), open: null, end: null, records: 0 };
}

function outOfOrder(progress: WindowProgress, at: Timestamp, what: string): SluiceError {
  const w = progress.window;
  return new SluiceError(
    'permanent',
    `${what} record at ${formatTimestamp(at)} is out of order in window ${formatTimestamp(w.from)}..${formatTimestamp(w.to)} of partition ${w.partitionId}`,
  );
}

function inWindow(progress: WindowProgress, at: Timestamp): boolean {
  return at >= progress.window.from && at <= progress.window.to;
}

/** Is a record of this kind at `at` possible after what has been seen? */
function inOrder(progress: WindowProgress, kind: ChangeRecord['kind'], at: Timestamp): boolean {
  const { open, end, seenThrough } = progress;
  if (!inWindow(progress, at)) return false;
  // After a child-partitions record only further child-partitions records of the same timestamp may come.
  if (end !== null) return kind === 'child-partitions' && at === end.at;
  switch (kind) {
    case 'data-change':
      return at === open || (at > seenThrough && (open === null || at > open));
    case 'heartbeat':
      return at >= seenThrough && (open === null || at >= open);
    case 'child-partitions':
      // Records at the child's start timestamp belong to the child, so none of them may precede it here.
      return at >= seenThrough && (open === null || at > open);
  }
}

/**
 * Folds one record into the progress. A data record at a later timestamp closes the previous one; a heartbeat
 * at `t` closes everything up to `t`; a child-partitions record at `t` closes everything before `t` and ends
 * the partition (several such records may share `t`; their children are merged).
 * @throws SluiceError (`permanent`) when records arrive out of order or outside the window.
 */
export function observe(progress: WindowProgress, record: ChangeRecord): WindowProgress {
  const at = recordTimestamp(record);
  if (!inOrder(progress, record.kind, at)) throw outOfOrder(progress, at, record.kind);
  switch (record.kind) {
    case 'data-change': {
      if (at === progress.open) return { ...progress, records: progress.records + 1 };
      const seenThrough = progress.open ?? progress.seenThrough;
      return { ...progress, seenThrough, open: at, records: progress.records + 1 };
    }
    case 'heartbeat':
      return { ...progress, seenThrough: at, open: null };
    case 'child-partitions': {
      const children = [...(progress.end?.children ?? []), ...record.childPartitions];
      const closed = addNanos(at, -1n);
      const seenThrough = maxTimestamp(closed, progress.seenThrough);
      return { ...progress, seenThrough, open: null, end: { at, children } };
    }
  }
}

/**
 * The query returned normally: every record up to `to` has been seen (unless the partition ended earlier).
 */
export function completeWindow(progress: WindowProgress): WindowProgress {
  if (progress.end) return progress;
  return { ...progress, seenThrough: progress.window.to, open: null };
}

/**
 * The furthest boundary seen — what the position may be advanced to once the sinks have acknowledged every
 * record handed to them so far. `null` when nothing past the start of the window is closed yet.
 */
export function boundaryOf(progress: WindowProgress): Boundary | null {
  if (progress.seenThrough < progress.window.from) return null;
  return { partitionId: progress.window.partitionId, at: progress.seenThrough } as Boundary;
}
