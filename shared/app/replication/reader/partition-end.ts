/**
 * Ending a partition on its child-partitions record (ADR-201's protocol): the sinks were flushed already; create
 * every child (create-only — a merge's other parents write identical bytes, so exactly one exists), then write
 * the parent `finished`, then mark ready each child whose parents have all finished and enqueue it. A crash
 * between steps is repaired by whoever comes next: the scheduler promotes and enqueues waiting children.
 *
 * A reader that stalled (ADR-1509) must not create children after another reader finished the lineage and
 * the scheduler removed it: children are created only after re-reading the parent and finding it still
 * leased by this reader with time left; a parent already finished had its children created before.
 */

import { SluiceError } from '../../../domain/errors';
import {
  entriesFromChildPartitions,
  finishPartition,
  type HistoryCursors,
  isHeldBy,
  isLeaseExpired,
  markReady,
  type PartitionEnd,
  type PartitionEntry,
  type PartitionView,
} from '../../../domain/ledger';
import type { Timestamp } from '../../../domain/timestamp';
import type { TaskQueue } from '../../../ports/task-queue';
import type { LedgerStore } from '../../ledger';
import { enqueueReaderTask } from '../common';

/** Finishes `entry` with `end`; returns the ids of the children enqueued. */
export async function endPartition(
  args: {
    ledger: LedgerStore;
    queue: TaskQueue;
    readerUrl: string;
    pipeline: string;
    holder: string;
    records: number;
    /** The history cursors as of the end (recorded with the finished entry). */
    history?: HistoryCursors;
    now: Timestamp;
  },
  entry: PartitionEntry,
  end: PartitionEnd,
): Promise<string[]> {
  const { ledger, holder } = args;
  const record = {
    kind: 'child-partitions' as const,
    startTimestamp: end.at,
    recordSequence: '0',
    childPartitions: end.children,
  };
  const children = entriesFromChildPartitions(record, entry.epoch);
  if (!(await stillHeld(args, entry))) return [];
  for (const child of children) await ledger.createPartition(child);
  const out = await ledger.updatePartition(entry.epoch, entry.id, (e, writer) =>
    finishPartition(e, {
      holder,
      end,
      writer,
      records: args.records,
      ...(args.history ? { history: args.history } : {}),
    }),
  );
  if (out.kind !== 'written' && out.kind !== 'unchanged') {
    throw new SluiceError(
      'conflict',
      `could not finish ${entry.id}: ${out.kind === 'refused' ? out.message : out.kind}`,
    );
  }
  const enqueued: string[] = [];
  for (const child of children) {
    if (await promoteChild(args, child)) enqueued.push(child.id);
  }
  return enqueued;
}

/**
 * Re-reads the parent before its children are created: true while this reader holds an unexpired lease;
 * false when the parent is already finished (its children were created then); @throws SluiceError
 * (`conflict`) when the entry is gone or another reader holds it — a stalled reader then gives up.
 */
async function stillHeld(
  args: { ledger: LedgerStore; holder: string; now: Timestamp },
  entry: PartitionEntry,
): Promise<boolean> {
  const current = await args.ledger.readPartition(entry.epoch, entry.id);
  const e = current?.value;
  if (e?.state === 'finished') return false;
  if (!e || !isHeldBy(e, args.holder) || (e.lease !== null && isLeaseExpired(e.lease, args.now))) {
    throw new SluiceError(
      'conflict',
      `not creating the children of ${entry.id}: ${e ? `its lease is no longer this reader's (${e.state})` : 'its entry is gone (the lineage was finished by another reader)'}`,
    );
  }
  return true;
}

/** Marks a child ready when all its parents finished, and enqueues it; false when it must still wait. */
async function promoteChild(
  args: { ledger: LedgerStore; queue: TaskQueue; readerUrl: string; pipeline: string },
  child: PartitionEntry,
): Promise<boolean> {
  const { ledger } = args;
  const parents: PartitionView[] = [];
  for (const id of child.parentIds) {
    const p = await ledger.readPartition(child.epoch, id);
    if (p) parents.push(p.value);
  }
  const out = await ledger.updatePartition(child.epoch, child.id, (e, writer) =>
    e.state === 'waiting' ? markReady(e, parents, writer) : null,
  );
  if ((out.kind !== 'written' && out.kind !== 'unchanged') || out.entry.state !== 'ready') return false;
  const task = {
    pipeline: args.pipeline,
    epoch: child.epoch,
    partition: child.id,
    position: out.entry.position,
  };
  await enqueueReaderTask(args.queue, args.readerUrl, task, out.entry.writer);
  return true;
}
