/**
 * Pipeline-wide views over partition entries: watermark, lag, and garbage-collection eligibility.
 * All work on {@link PartitionView}s, i.e. on what the scheduler learns from listing metadata.
 */
import { diffMillis, type Timestamp } from '../timestamp';
import type { PartitionView } from './entry';

/** A partition has started once a reader has held it (or it got past `ready`). */
export function hasStarted(view: PartitionView): boolean {
  return (
    view.state === 'leased' ||
    view.state === 'finished' ||
    view.state === 'failed' ||
    view.position >= view.start
  );
}

/**
 * The watermark: the minimum position over all unfinished partitions of the epoch (invariant 5). A
 * not-yet-started partition's position is its start − 1 ns, so it counts as such; a failed partition holds
 * the watermark until it is repaired. `null` when no partition is unfinished (nothing to say).
 */
export function watermark(views: Iterable<PartitionView>, epoch?: number): Timestamp | null {
  let min: Timestamp | null = null;
  for (const v of views) {
    if (v.state === 'finished' || (epoch !== undefined && v.epoch !== epoch)) continue;
    if (min === null || v.position < min) min = v.position;
  }
  return min;
}

/** How far a partition's position trails `now`, in milliseconds (0 for a finished partition). */
export function lagMillis(view: PartitionView, now: Timestamp): number {
  if (view.state === 'finished') return 0;
  return Math.max(0, diffMillis(now, view.position));
}

/**
 * A finished partition may be removed only when all its children exist and have started (invariant 6):
 * until then its entry is what lets a waiting child see that this parent finished.
 */
export function isRemovable(view: PartitionView, byId: ReadonlyMap<string, PartitionView>): boolean {
  if (view.state !== 'finished' || view.childIds === null) return false;
  return view.childIds.every((id) => {
    const child = byId.get(id);
    return child !== undefined && hasStarted(child);
  });
}
