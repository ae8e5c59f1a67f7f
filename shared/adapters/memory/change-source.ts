/**
 * In-memory `ChangeSource` for tests: records scripted per partition token. A window returns the partition's
 * records with timestamps in [from, to] (both inclusive) in timestamp order, stops after the child-partitions
 * records of the partition's end (a split or merge may be reported as several at one timestamp, each in
 * `record_sequence` order; a merged child is announced by each parent), and answers a quiet window with one heartbeat at its end, as Spanner does.
 */
import type { ChangeRecord, ChildPartitionsRecord } from '../../domain/change-record';
import { compareTimestamps, type Timestamp } from '../../domain/timestamp';
import type { ChangeQuery, ChangeSource } from '../../ports/change-source';

interface ScriptedPartition {
  start: Timestamp;
  /** Set by a child-partitions record: the partition's end. */
  end?: Timestamp;
  parents: string[];
  records: ChangeRecord[];
}

/** A partition token that was never scripted; carries NOT_FOUND like the service's answer. */
export class UnknownPartitionError extends Error {
  readonly code = 5;
  constructor(token: string) {
    super(`unknown partition token ${token}`);
    this.name = 'UnknownPartitionError';
  }
}

function timeOf(record: ChangeRecord): Timestamp {
  if (record.kind === 'data-change') return record.commitTimestamp;
  if (record.kind === 'heartbeat') return record.timestamp;
  return record.startTimestamp;
}

function inWindow(t: Timestamp, from: Timestamp, to: Timestamp | null): boolean {
  return compareTimestamps(t, from) >= 0 && (to === null || compareTimestamps(t, to) <= 0);
}

/** Scripted {@link ChangeSource}. */
export class MemoryChangeSource implements ChangeSource {
  private readonly partitions = new Map<string, ScriptedPartition>();

  /** Declares a partition starting at `start`; with no parents it is an initial partition. */
  addPartition(token: string, start: Timestamp, parents: string[] = []): void {
    this.partitions.set(token, { start, parents, records: [] });
  }

  /** Appends a record to a partition; a child-partitions record ends it (and declares the children). */
  append(token: string, record: ChangeRecord): void {
    const p = this.partition(token);
    p.records.push(record);
    p.records.sort((a, b) => compareTimestamps(timeOf(a), timeOf(b)));
    if (record.kind === 'child-partitions') {
      p.end = record.startTimestamp;
      for (const child of record.childPartitions) {
        if (!this.partitions.has(child.token))
          this.addPartition(child.token, record.startTimestamp, child.parentPartitionTokens);
      }
    }
  }

  /** Every partition token, for assertions. */
  tokens(): string[] {
    return [...this.partitions.keys()];
  }

  async *read(query: ChangeQuery, signal?: AbortSignal): AsyncIterable<ChangeRecord> {
    const records =
      query.partitionToken === null ? this.initial(query.from) : this.window(query.partitionToken, query);
    for (const record of records) {
      // Let an abort that fires while the consumer works take effect before the next record.
      await Promise.resolve();
      if (signal?.aborted) return;
      yield structuredClone(record);
    }
  }

  private partition(token: string): ScriptedPartition {
    const p = this.partitions.get(token);
    if (!p) throw new UnknownPartitionError(token);
    return p;
  }

  /** The initial query: one child-partitions record per partition alive at `from`, without parents. */
  private initial(from: Timestamp): ChildPartitionsRecord[] {
    const alive = [...this.partitions.entries()].filter(
      ([, p]) => compareTimestamps(p.start, from) <= 0 && (!p.end || compareTimestamps(p.end, from) > 0),
    );
    return alive.map(([token], i) => ({
      kind: 'child-partitions',
      startTimestamp: from,
      recordSequence: String(i).padStart(8, '0'),
      childPartitions: [{ token, parentPartitionTokens: [] }],
    }));
  }

  private window(token: string, query: ChangeQuery): ChangeRecord[] {
    const p = this.partition(token);
    const out: ChangeRecord[] = [];
    for (const record of p.records) {
      if (!inWindow(timeOf(record), query.from, query.to)) continue;
      // The end may come as several child-partitions records at one timestamp, ordered by record_sequence
      // (reference spanner-change-streams.md, child partitions records): every one of them is delivered.
      if (p.end !== undefined && compareTimestamps(timeOf(record), p.end) > 0) break;
      out.push(record);
    }
    if (out.length === 0 && query.to !== null) out.push({ kind: 'heartbeat', timestamp: query.to });
    return out;
  }
}
