/**
 * Transitions that record a reader's progress: advancing the position, finishing on a child-partitions
 * record, failing, and an operator's retry of a failed partition.
 */
import type { ChildPartitionsRecord } from '../change-record';
import { addNanos, formatTimestamp, maxTimestamp } from '../timestamp';
import { type LastError, type PartitionEntry, partitionId, refuse, type Transition } from './entry';
import { type HistoryCursors, sameCursors } from './history-cursor';
import { isHeldBy } from './lease';
import type { Boundary, PartitionEnd } from './progress';

function notHolder(entry: PartitionEntry, holder: string): Transition {
  return refuse('not-holder', `partition ${entry.id} is not leased by ${holder}`);
}

/** Refuses a boundary of another partition or behind the position (invariant 1: positions only move forward). */
function refuseBoundary(entry: PartitionEntry, boundary: Boundary): Transition | null {
  if (boundary.partitionId !== entry.id) {
    return refuse('wrong-partition', `boundary of ${boundary.partitionId} applied to ${entry.id}`);
  }
  if (boundary.at < entry.position) {
    return refuse(
      'backwards',
      `position of ${entry.id} is ${formatTimestamp(entry.position)}; refusing ${formatTimestamp(boundary.at)}`,
    );
  }
  return null;
}

/**
 * Moves the position forward to a boundary (invariant 1: call it only after the sinks acknowledged every
 * record up to the boundary), with the history cursors that belong to it: `history` says where the first
 * history row after the boundary goes in each history table, so position and cursors can never disagree.
 * Nothing changed (same boundary, no records, same cursors) returns the same entry object, so the caller can
 * skip the write.
 */
export function advancePosition(
  entry: PartitionEntry,
  args: { holder: string; boundary: Boundary; writer: string; records?: number; history?: HistoryCursors },
): Transition {
  const { boundary } = args;
  if (!isHeldBy(entry, args.holder)) return notHolder(entry, args.holder);
  const refused = refuseBoundary(entry, boundary);
  if (refused) return refused;
  const history = args.history ?? entry.history;
  const sameHistory = sameCursors(history, entry.history);
  if (boundary.at === entry.position && !args.records && sameHistory) return { ok: true, entry };
  const counters = { ...entry.counters, records: entry.counters.records + (args.records ?? 0) };
  return {
    ok: true,
    entry: {
      ...entry,
      position: boundary.at,
      counters,
      // The partition moves: whatever failed before is behind it.
      failures: boundary.at > entry.position ? 0 : entry.failures,
      history: sameHistory ? entry.history : history,
      writer: args.writer,
    },
  };
}

/**
 * Records new history cursors without moving the position: a stream was created or replaced before any row
 * went to it (ADR-1601), and the position it belongs to has not moved yet. Holder only; unchanged cursors
 * return the same entry.
 */
export function recordHistoryCursors(
  entry: PartitionEntry,
  args: { holder: string; history: HistoryCursors; writer: string },
): Transition {
  if (!isHeldBy(entry, args.holder)) return notHolder(entry, args.holder);
  if (sameCursors(args.history, entry.history)) return { ok: true, entry };
  return { ok: true, entry: { ...entry, history: args.history, writer: args.writer } };
}

/** The end of a partition as a value, from its child-partitions record(s) (all share one start timestamp). */
export function partitionEndOf(records: ChildPartitionsRecord[]): PartitionEnd | null {
  const first = records[0];
  if (!first || records.some((r) => r.startTimestamp !== first.startTimestamp)) return null;
  return { at: first.startTimestamp, children: records.flatMap((r) => r.childPartitions) };
}

/**
 * Finishes a partition on its child-partitions record: the position becomes `end − 1 ns` (records at the end
 * timestamp belong to the children, which start there), the children are recorded, the lease is dropped.
 *
 * Protocol: create the child entries (create-only) *before* writing this, so a finished partition always has
 * its children in the ledger; call only after the sinks acknowledged every record before the end.
 */
export function finishPartition(
  entry: PartitionEntry,
  args: { holder: string; end: PartitionEnd; writer: string; records?: number; history?: HistoryCursors },
): Transition {
  const { end } = args;
  if (!isHeldBy(entry, args.holder)) return notHolder(entry, args.holder);
  if (end.at < entry.position) {
    return refuse(
      'bad-record',
      `child-partitions record at ${formatTimestamp(end.at)} is not after position ${formatTimestamp(entry.position)} of ${entry.id}`,
    );
  }
  const childTokens = [...new Set(end.children.map((c) => c.token))];
  const closed = addNanos(end.at, -1n);
  const position = maxTimestamp(closed, entry.position);
  const counters = { ...entry.counters, records: entry.counters.records + (args.records ?? 0) };
  return {
    ok: true,
    entry: {
      ...entry,
      state: 'finished',
      position,
      end: end.at,
      lease: null,
      childTokens,
      childIds: childTokens.map(partitionId),
      counters,
      failures: 0,
      history: args.history ?? entry.history,
      writer: args.writer,
    },
  };
}

/**
 * Records a permanent failure: the partition stops (and holds the watermark) until an operator retries it.
 * With `boundary`, the position first moves to it — the boundary every sink acknowledged before the failure
 * (with its history cursors), so a retry does not read and write that part again.
 */
export function failPartition(
  entry: PartitionEntry,
  args: {
    holder: string;
    error: LastError;
    writer: string;
    boundary?: Boundary | null;
    history?: HistoryCursors;
    records?: number;
  },
): Transition {
  if (!isHeldBy(entry, args.holder)) return notHolder(entry, args.holder);
  const moved = args.boundary ? advancePosition(entry, { ...args, boundary: args.boundary }) : null;
  // A move refused (behind the position) must not lose the failure: fail where it is.
  const base = moved?.ok ? moved.entry : entry;
  const counters = { ...base.counters, errors: base.counters.errors + 1 };
  return {
    ok: true,
    entry: {
      ...base,
      state: 'failed',
      lease: null,
      lastError: args.error,
      counters,
      failures: base.failures + 1,
      writer: args.writer,
    },
  };
}

/**
 * Operator action: a failed partition becomes `ready` again (its parents had all finished before it ran),
 * with its failures count cleared; `lastError` stays as the record of what happened.
 */
export function retryFailed(entry: PartitionEntry, writer: string): Transition {
  if (entry.state !== 'failed') return refuse('wrong-state', `partition ${entry.id} is ${entry.state}`);
  return { ok: true, entry: { ...entry, state: 'ready', failures: 0, writer } };
}

/**
 * Records a quiet window without a lease (ADR-1201): the window `(position, boundary]` held no data record and
 * no child-partitions record — only heartbeats — so every sink has trivially acknowledged everything up to the
 * boundary and the position may move there. Only a `ready` partition may be checkpointed this way; the
 * compare-and-swap write on the generation the window was planned from is what proves nobody read (or leased)
 * the partition meanwhile. Counts the window. A boundary at the position returns the same entry (no write).
 */
export function checkpointQuiet(
  entry: PartitionEntry,
  args: { boundary: Boundary; writer: string },
): Transition {
  const { boundary } = args;
  if (entry.state !== 'ready')
    return refuse('wrong-state', `partition ${entry.id} is ${entry.state}, not ready`);
  const refused = refuseBoundary(entry, boundary);
  if (refused) return refused;
  if (boundary.at === entry.position) return { ok: true, entry };
  const counters = { ...entry.counters, windows: entry.counters.windows + 1 };
  return { ok: true, entry: { ...entry, position: boundary.at, counters, failures: 0, writer: args.writer } };
}
