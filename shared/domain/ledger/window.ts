/**
 * Window planning: which `[from, to]` (both inclusive) a reader queries next on a partition.
 *
 * `from` is always `position + 1 ns`: every record at or before the position is already in the sinks, and the
 * position only ever sits on a timestamp boundary, so nothing is skipped and nothing is re-read.
 */
import { addMillis, addNanos, minTimestamp, type Timestamp } from '../timestamp';
import type { PartitionView } from './entry';

/** One bounded change-stream query on one partition. */
export interface Window {
  partitionId: string;
  epoch: number;
  from: Timestamp;
  to: Timestamp;
}

/** How far windows reach. */
export interface WindowSettings {
  /** `scheduled`: up to about now, then exit. `continuous`: long-poll into the future. */
  mode: 'scheduled' | 'continuous';
  /** Upper bound of `to − from`, so one window stays well inside the task dispatch deadline. */
  maxWindowMs: number;
  /** `continuous` only: how far past now a window reaches (the query blocks until then). */
  longPollMs: number;
}

/**
 * The next window of a partition, or `null` when there is nothing to read yet (the position is already at the
 * reach of the window) or the partition is finished or failed.
 *
 * - `scheduled`: `to = min(now, from + maxWindow)`.
 * - `continuous`: `to = min(now + longPoll, from + maxWindow)` — a partition far behind
 *   catches up in windows of `maxWindow`, one that is current long-polls.
 */
export function planWindow(entry: PartitionView, now: Timestamp, settings: WindowSettings): Window | null {
  if (entry.state === 'finished' || entry.state === 'failed') return null;
  const from = addNanos(entry.position, 1n);
  const cap = addMillis(from, settings.maxWindowMs);
  const reach = settings.mode === 'continuous' ? addMillis(now, settings.longPollMs) : now;
  const to = minTimestamp(reach, cap);
  // A position already at `now` (or a start in the future) leaves nothing to read yet.
  if (to < from) return null;
  return { partitionId: entry.id, epoch: entry.epoch, from, to };
}

/** A short, stable name of a window for logs and task names: `<partition id>@<from in ns>`. */
export function windowId(window: Pick<Window, 'partitionId' | 'from'>): string {
  return `${window.partitionId}@${window.from.toString()}`;
}
