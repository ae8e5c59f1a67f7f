/**
 * A model of a change stream for the ledger simulation: a random split/merge DAG of partitions with data
 * records and heartbeats, queried like the real TVF (`[from, to]` inclusive, child-partitions record at the
 * partition's end).
 */

import { Random } from '../../../local/random';
import type {
  ChangeRecord,
  ChildPartitionsRecord,
  DataChangeRecord,
} from '../../../shared/domain/change-record';
import { addNanos, fromNanos, type Timestamp } from '../../../shared/domain/timestamp';

/** One partition of the model. */
export interface ModelPartition {
  token: string;
  parents: string[];
  start: Timestamp;
  /** Exclusive end = start of the children; null while active. */
  end: Timestamp | null;
  children: string[];
  /** Data record timestamps (sorted, may repeat). */
  records: Timestamp[];
}

/** A churn event: `split` 1→2, `move` 1→1, `merge` 2→1. */
export interface Churn {
  kind: 'split' | 'move' | 'merge';
  pick: number;
  gap: number;
}

/** Millisecond in nanoseconds (model time unit). */
export const MS = 1_000_000n;
/** Start of the model's time. */
export const T0 = fromNanos(1_704_067_200_000_000_000n);

function prng(seed: number): () => number {
  const random = new Random(seed);
  return () => random.next();
}

/** The stream: partitions by token, the horizon (last commit time) and the initial record. */
export class StreamModel {
  readonly partitions = new Map<string, ModelPartition>();
  readonly roots: string[] = [];
  readonly horizon: Timestamp;
  private next = 0;

  constructor(roots: number, churn: Churn[], seed: number) {
    const rnd = prng(seed);
    let now = T0;
    const active: string[] = [];
    for (let i = 0; i < roots; i++) {
      const token = this.add([], now);
      this.roots.push(token);
      active.push(token);
    }
    for (const c of churn) {
      now = addNanos(now, BigInt(c.gap) * MS);
      const take = c.kind === 'merge' && active.length >= 2 ? 2 : 1;
      const ended = active.splice(c.pick % active.length, 1);
      if (take === 2) ended.push(...active.splice(c.pick % active.length, 1));
      const n = c.kind === 'split' ? 2 : 1;
      for (const p of ended) this.partitions.get(p)!.end = now;
      for (let i = 0; i < n; i++) {
        const child = this.add(ended, now);
        for (const p of ended) this.partitions.get(p)!.children.push(child);
        active.push(child);
      }
    }
    this.horizon = addNanos(now, 20n * MS);
    for (const p of this.partitions.values()) this.fillRecords(p, rnd);
  }

  private add(parents: string[], start: Timestamp): string {
    const token = `tok-${this.next++}-${'x'.repeat(40)}`;
    this.partitions.set(token, { token, parents, start, end: null, children: [], records: [] });
    return token;
  }

  private fillRecords(p: ModelPartition, rnd: () => number): void {
    const last = p.end ?? this.horizon;
    const span = Number((last - p.start) / MS);
    const count = Math.floor(rnd() * 6);
    for (let i = 0; i < count && span > 0; i++) {
      const at = addNanos(p.start, BigInt(Math.floor(rnd() * span)) * MS);
      p.records.push(at);
      if (rnd() < 0.3) p.records.push(at); // several records at one commit timestamp
    }
    p.records.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /** The initial query's answer: one child-partitions record listing the roots. */
  initialRecord(): ChildPartitionsRecord {
    return {
      kind: 'child-partitions',
      startTimestamp: T0,
      recordSequence: '00000000',
      childPartitions: this.roots.map((token) => ({ token, parentPartitionTokens: [] })),
    };
  }

  /** Record key for the sink: token, timestamp and index among records of that timestamp. */
  static key(token: string, at: Timestamp, index: number): string {
    return `${token}#${at}#${index}`;
  }

  /**
   * The query `[from, to]` on a partition: data records and a heartbeat every 5 ms of quiet time, then the
   * child-partitions record when the partition ends within the window. A start after the end is the error the
   * real service raises (the simulation must never do it).
   */
  query(token: string, from: Timestamp, to: Timestamp): { record: ChangeRecord; key?: string }[] {
    const p = this.partitions.get(token)!;
    if (p.end !== null && from > p.end) throw new Error(`OUT_OF_RANGE: ${token} ended before ${from}`);
    const out: { record: ChangeRecord; key?: string }[] = [];
    const stop = p.end !== null && p.end <= to ? addNanos(p.end, -1n) : to;
    let lastTs: Timestamp | null = null;
    let index = 0;
    let quietSince = from;
    for (const at of p.records) {
      if (at < from || at > stop) continue;
      if (at - quietSince >= 5n * MS)
        out.push({ record: { kind: 'heartbeat', timestamp: addNanos(at, -MS) } });
      index = at === lastTs ? index + 1 : 0;
      lastTs = at;
      quietSince = at;
      out.push({ record: dataRecord(at), key: StreamModel.key(token, at, index) });
    }
    if (p.end !== null && p.end <= to) {
      const children = p.children.map((c) => ({
        token: c,
        parentPartitionTokens: this.partitions.get(c)!.parents,
      }));
      out.push({
        record: {
          kind: 'child-partitions',
          startTimestamp: p.end,
          recordSequence: '00000000',
          childPartitions: children,
        },
      });
    }
    return out;
  }

  /** Keys of every record of every partition with commit timestamp ≤ `at`. */
  keysThrough(at: Timestamp, token?: string): string[] {
    const keys: string[] = [];
    for (const p of this.partitions.values()) {
      if (token !== undefined && p.token !== token) continue;
      let lastTs: Timestamp | null = null;
      let index = 0;
      for (const ts of p.records) {
        index = ts === lastTs ? index + 1 : 0;
        lastTs = ts;
        if (ts <= at) keys.push(StreamModel.key(p.token, ts, index));
      }
    }
    return keys;
  }
}

function dataRecord(at: Timestamp): DataChangeRecord {
  return {
    kind: 'data-change',
    commitTimestamp: at,
    recordSequence: '00000000',
    serverTransactionId: `tx-${at}`,
    isLastRecordInTransactionInPartition: true,
    tableName: 'Orders',
    columnTypes: [],
    mods: [],
    modType: 'UPDATE',
    valueCaptureType: 'NEW_ROW',
    numberOfRecordsInTransaction: 1,
    numberOfPartitionsInTransaction: 1,
    transactionTag: '',
    isSystemTransaction: false,
  };
}
