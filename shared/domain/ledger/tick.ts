/**
 * The scheduler's tick plan: from the partition views of one listing, what to do this tick. Pure and
 * deterministic (ids sorted), so two schedulers ticking concurrently decide the same thing; the writes they
 * then make are compare-and-swap and the tasks they enqueue are named, so doing it twice is harmless.
 */
import type { Timestamp } from '../timestamp';
import { unfinishedParents } from './create';
import type { PartitionView } from './entry';
import { isLeaseExpired } from './lease';
import { isRemovable, lagMillis, watermark } from './lifecycle';

/** What one tick should do. Every list is sorted by partition id. */
export interface TickPlan {
  /** `ready`: enqueue a window task. */
  enqueue: string[];
  /** `waiting` with every parent finished: mark ready (CAS), then enqueue. */
  promote: string[];
  /** `leased` with an expired lease: the holder died or stalled; enqueue so a reader takes over. */
  expired: string[];
  /** `waiting` on parents that are unfinished or not (yet) visible. */
  waiting: { id: string; parents: string[] }[];
  /** `finished`, all children exist and started: the entry may be deleted. */
  removable: string[];
  /**
   * `waiting` on parents none of which exists: re-created by a reader that stalled after the lineage was
   * finished and removed (a legitimate child keeps its parents until it started). Deleted, not waited for.
   */
  orphaned: string[];
  /** `failed`: stopped until an operator retries; shown on the status page. */
  failed: string[];
  /** Entries of another epoch (left by a restart): to be deleted. */
  stale: string[];
  /** Minimum position over unfinished partitions of the epoch; `null` if none is unfinished. */
  watermark: Timestamp | null;
  /** Lag of every unfinished partition of the epoch, in milliseconds. */
  lagMillis: Record<string, number>;
}

const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** Plans a tick over the views of one listing, for the manifest's current `epoch`, at `now`. */
export function planTick(views: readonly PartitionView[], now: Timestamp, epoch: number): TickPlan {
  const all = views.filter((v) => v.epoch === epoch);
  const present = new Set(all.map((v) => v.id));
  const isOrphan = (v: PartitionView) =>
    v.state === 'waiting' && v.parentIds.length > 0 && v.parentIds.every((id) => !present.has(id));
  const orphaned = all.filter(isOrphan).map((v) => v.id);
  const current = all.filter((v) => !isOrphan(v)).sort(byId);
  const index = new Map(current.map((v) => [v.id, v]));
  const plan: TickPlan = {
    enqueue: [],
    promote: [],
    expired: [],
    waiting: [],
    removable: [],
    orphaned: orphaned.sort(),
    failed: [],
    stale: views
      .filter((v) => v.epoch !== epoch)
      .map((v) => v.id)
      .sort(),
    watermark: watermark(current),
    lagMillis: {},
  };
  for (const v of current) {
    if (v.state !== 'finished') plan.lagMillis[v.id] = lagMillis(v, now);
    switch (v.state) {
      case 'ready':
        plan.enqueue.push(v.id);
        break;
      case 'waiting': {
        const parents = unfinishedParents(
          v,
          v.parentIds.flatMap((id) => index.get(id) ?? []),
        );
        if (parents.length === 0) plan.promote.push(v.id);
        else plan.waiting.push({ id: v.id, parents });
        break;
      }
      case 'leased':
        if (v.lease === null || isLeaseExpired(v.lease, now)) plan.expired.push(v.id);
        break;
      case 'finished':
        if (isRemovable(v, index)) plan.removable.push(v.id);
        break;
      case 'failed':
        plan.failed.push(v.id);
        break;
    }
  }
  return plan;
}
