/**
 * The ledger and queue work of one scheduler tick, as its plan decided it: promote waiting children whose
 * parents all finished, enqueue ready work and takeovers, and delete what may go. Every write is
 * compare-and-swap and every task is named after its work, so two concurrent ticks do the same harmless things;
 * a failure of one partition's step becomes a status error and the others go on.
 */
import { SluiceError } from '../../../domain/errors';
import { markReady, type TickPlan } from '../../../domain/ledger';
import { formatTimestamp, type Timestamp } from '../../../domain/timestamp';
import type { TaskQueue } from '../../../ports/task-queue';
import type { AppSettings, Runtime } from '../../common';
import type { LedgerStore, ListedPartition, StatusError } from '../../ledger';
import { enqueueReaderTask } from '../common';

/** What the tick's work needs. */
export interface TickContext {
  ledger: LedgerStore;
  queue: TaskQueue;
  settings: AppSettings;
  runtime: Runtime;
}

/** A partition to enqueue: its id, position and the writer token of its last write (the task's name). */
export interface TickWork {
  id: string;
  position: Timestamp;
  writer: string;
}

/** Logs a failed step of a tick and turns it into a status error. */
export function toStatusError(runtime: Runtime, err: unknown, partition?: string): StatusError {
  const e = SluiceError.from(err);
  runtime.log.error('scheduler.error', e, partition ? { partition } : {});
  return {
    ...(partition ? { partition } : {}),
    kind: e.kind,
    message: e.message,
    at: formatTimestamp(runtime.now()),
  };
}

/** Marks ready every waiting partition whose parents all finished; returns the promoted entries' positions. */
export async function promote(
  ctx: TickContext,
  plan: TickPlan,
  byId: Map<string, ListedPartition>,
  errors: StatusError[],
): Promise<TickWork[]> {
  const parents = [...byId.values()].map((p) => p.view);
  const promoted: TickWork[] = [];
  for (const id of plan.promote) {
    const epoch = byId.get(id)!.view.epoch;
    try {
      const out = await ctx.ledger.updatePartition(epoch, id, (e, w) => markReady(e, parents, w));
      if (out.kind === 'written' || (out.kind === 'refused' && out.entry.state === 'ready')) {
        promoted.push({ id, position: out.entry.position, writer: out.entry.writer });
      }
    } catch (err) {
      errors.push(toStatusError(ctx.runtime, err, id));
    }
  }
  return promoted;
}

/** Enqueues ready work, promoted children and takeovers of expired leases; returns how many tasks were new. */
export async function enqueue(
  ctx: TickContext,
  plan: TickPlan,
  promoted: TickWork[],
  byId: Map<string, ListedPartition>,
  errors: StatusError[],
  epoch: number,
): Promise<number> {
  const url = ctx.settings.readerUrl;
  // A takeover of an expired lease needs no special name: the holder's writes changed the entry's writer.
  const listed = (id: string): TickWork => {
    const v = byId.get(id)!.view;
    return { id, position: v.position, writer: v.writer };
  };
  const work = [...plan.enqueue.map(listed), ...promoted, ...plan.expired.map(listed)];
  let created = 0;
  for (const w of work) {
    try {
      const task = {
        pipeline: ctx.settings.config.pipeline,
        epoch,
        partition: w.id,
        position: w.position,
      };
      const out = await enqueueReaderTask(ctx.queue, url, task, w.writer);
      if (out === 'created') created++;
    } catch (err) {
      errors.push(toStatusError(ctx.runtime, err, w.id));
    }
  }
  return created;
}

/**
 * Deletes removable finished partitions, orphaned waiting ones and entries of older epochs (compare-and-swap
 * on generation).
 */
export async function remove(
  ctx: TickContext,
  plan: TickPlan,
  all: ListedPartition[],
  epoch: number,
): Promise<number> {
  const removable = new Set(plan.removable);
  const orphaned = new Set(plan.orphaned);
  let removed = 0;
  for (const p of all) {
    const orphan = p.view.epoch === epoch && orphaned.has(p.view.id);
    const gone = p.view.epoch !== epoch || removable.has(p.view.id) || orphan;
    if (!gone || !(await ctx.ledger.deleteObject(p.name, p.generation))) continue;
    removed++;
    // A stalled reader re-created it after its lineage was finished and removed (ADR-1509).
    if (orphan)
      ctx.runtime.log.warn('partition.orphan-removed', {
        partition: p.view.id,
        parents: p.view.parentIds,
      });
  }
  return removed;
}
