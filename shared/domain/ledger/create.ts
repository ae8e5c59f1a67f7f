/**
 * Creating partition entries from child-partitions records, and readiness (all parents finished).
 *
 * The content of a created entry depends only on the record and the pipeline epoch — never on who creates it
 * or when — so the parents of a merge, which both report the same child, write byte-identical objects with a
 * create-only precondition: exactly one entry exists whoever wins (DESIGN §4, invariant 4).
 */
import type { ChildPartitionsRecord } from '../change-record';
import { addNanos } from '../timestamp';
import {
  CREATE_WRITER,
  ENTRY_FORMAT,
  type PartitionEntry,
  type PartitionView,
  partitionId,
  refuse,
  type Transition,
} from './entry';

/**
 * Entries for every child partition a record announces, in the record's order, duplicates dropped.
 * Children with parents start `waiting`; the partitions of the initial query (no parents) start `ready`.
 */
export function entriesFromChildPartitions(record: ChildPartitionsRecord, epoch: number): PartitionEntry[] {
  const seen = new Set<string>();
  const entries: PartitionEntry[] = [];
  for (const child of record.childPartitions) {
    if (seen.has(child.token)) continue;
    seen.add(child.token);
    // Sorted and de-duplicated so that every parent derives the same bytes whatever order it was given.
    const parentTokens = [...new Set(child.parentPartitionTokens.filter((t) => t !== ''))].sort();
    entries.push({
      format: ENTRY_FORMAT,
      id: partitionId(child.token),
      token: child.token,
      state: parentTokens.length === 0 ? 'ready' : 'waiting',
      epoch,
      start: record.startTimestamp,
      // Nothing of the partition is in the sinks yet: position is just before its first possible record.
      position: addNanos(record.startTimestamp, -1n),
      end: null,
      lease: null,
      parentTokens,
      parentIds: parentTokens.map(partitionId),
      childTokens: null,
      childIds: null,
      failures: 0,
      lastError: null,
      counters: { leases: 0, windows: 0, records: 0, errors: 0 },
      history: {},
      writer: CREATE_WRITER,
    });
  }
  return entries;
}

/**
 * Parent ids that keep a partition waiting: not in `parents` (not visible) or not finished.
 * `parents` may hold any entries or views; those that are not parents are ignored.
 */
export function unfinishedParents(entry: PartitionView, parents: Iterable<PartitionView>): string[] {
  const finished = new Set<string>();
  for (const p of parents) if (p.state === 'finished') finished.add(p.id);
  return entry.parentIds.filter((id) => !finished.has(id));
}

/** True when every parent is finished — the only condition under which a child may be read (invariant 2). */
export function isReadyToRead(entry: PartitionView, parents: Iterable<PartitionView>): boolean {
  return unfinishedParents(entry, parents).length === 0;
}

/** `waiting` → `ready`, allowed only when every parent is seen finished. */
export function markReady(
  entry: PartitionEntry,
  parents: Iterable<PartitionView>,
  writer: string,
): Transition {
  if (entry.state !== 'waiting') return refuse('wrong-state', `partition ${entry.id} is ${entry.state}`);
  const pending = unfinishedParents(entry, parents);
  if (pending.length > 0) {
    return refuse('parents-unfinished', `partition ${entry.id} waits for ${pending.join(', ')}`);
  }
  return { ok: true, entry: { ...entry, state: 'ready', writer } };
}
