/**
 * The partitions of one change stream. Keys are hashed into a 32-bit range space; at any instant the active
 * partitions tile that space, so every key has exactly one owner. Churn ends partitions at a timestamp T and
 * starts children at T: a move (one child, same range), a split (two children, halves) or a merge (two
 * adjacent partitions, one child). Records with commit timestamps < T stay in the parent, ≥ T go to a child.
 */
import { createHash } from 'node:crypto';
import type { ChildPartition, DataChangeRecord } from './model';

const SPACE = 2 ** 32;

/** One partition: its key range `[lo, hi)`, lifetime `[start, end)` and lineage. */
export interface Partition {
  token: string;
  lo: number;
  hi: number;
  startNs: bigint;
  endNs: bigint | null;
  parents: string[];
  children: string[];
  /**
   * True when the end is reported as one child-partitions record per child at one timestamp, in
   * `record_sequence` order, as the service may report a split (reference spanner-change-streams.md).
   */
  childRecordEach?: boolean;
  /** Data change records in (commit timestamp, server transaction id, record sequence) order. */
  records: DataChangeRecord[];
}

/** What one churn did. */
export interface ChurnEvent {
  op: 'move' | 'split' | 'merge';
  atNs: bigint;
  parents: string[];
  children: string[];
}

/** FNV-1a over the UTF-16 code units of `text`: a stable hash of a table and key into the range space. */
export function hashKey(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** Lineage and records of one stream's partitions. */
export class PartitionSet {
  private readonly byToken = new Map<string, Partition>();
  private opIndex = 0;
  /** Splits so far (every other one is reported as one child-partitions record per child). */
  private splits = 0;

  private readonly createdNs: bigint;
  /** Partitions ever added (tokens derive from it; expiry removes partitions but never rewinds it). */
  private added = 0;

  constructor(
    private readonly streamName: string,
    private readonly initialCount: number,
    startNs: bigint,
  ) {
    this.createdNs = startNs;
    const n = Math.max(1, Math.floor(initialCount));
    for (let i = 0; i < n; i++) {
      this.add(Math.floor((i * SPACE) / n), Math.floor(((i + 1) * SPACE) / n), startNs, []);
    }
  }

  private add(lo: number, hi: number, startNs: bigint, parents: string[]): Partition {
    // Derived from the stream, the set's creation, the partition's place in its history and its range: a
    // replay of the same history (persistence) hands out the same tokens, which readers keep in their ledger.
    const seed = `${this.streamName}\u0000${this.createdNs}\u0000${this.added++}\u0000${lo}-${hi}@${startNs}`;
    const digest = createHash('sha256').update(seed).digest('hex').slice(0, 48);
    const id = `${this.streamName}|${digest}|${lo.toString(16)}-${hi.toString(16)}`;
    const token = Buffer.from(id).toString('base64url');
    const p: Partition = { token, lo, hi, startNs, endNs: null, parents, children: [], records: [] };
    this.byToken.set(token, p);
    return p;
  }

  /** The partition with this token, if it belongs to this stream. */
  get(token: string): Partition | undefined {
    return this.byToken.get(token);
  }

  /** Every partition, oldest first. */
  all(): Partition[] {
    return [...this.byToken.values()];
  }

  /** Partitions alive at `ts` (`start ≤ ts < end`), by token. */
  activeAt(ts: bigint): Partition[] {
    return this.all()
      .filter((p) => p.startNs <= ts && (p.endNs === null || ts < p.endNs))
      .sort((a, b) => (a.token < b.token ? -1 : a.token > b.token ? 1 : 0));
  }

  /** The partition that owns `hash` at `ts`. */
  owner(hash: number, ts: bigint): Partition {
    for (const p of this.byToken.values()) {
      if (p.lo <= hash && hash < p.hi && p.startNs <= ts && (p.endNs === null || ts < p.endNs)) return p;
    }
    throw new Error(`no partition of ${this.streamName} owns ${hash} at ${ts}`);
  }

  /** Children of an ended partition, as its child-partitions record lists them. */
  childrenOf(p: Partition): ChildPartition[] {
    return p.children.map((token) => ({
      token,
      parentPartitionTokens: [...(this.byToken.get(token)?.parents ?? [])],
    }));
  }

  /**
   * Ends partitions at `atNs` and starts their children. Cycles split → move → merge so the number of
   * partitions stays around the initial count; falls back to what is possible.
   */
  churn(atNs: bigint): ChurnEvent {
    const active = this.activeAt(atNs).sort((a, b) => a.lo - b.lo);
    const order: ChurnEvent['op'][] = ['split', 'move', 'merge'];
    let op = order[this.opIndex++ % order.length] ?? 'move';
    if (op === 'merge' && active.length < 2) op = 'split';
    if (op === 'split' && active.length >= 2 * this.initialCount + 2) op = 'merge';
    const splittable = active.filter((p) => p.hi - p.lo >= 2);
    if (op === 'split' && splittable.length === 0) op = active.length >= 2 ? 'merge' : 'move';
    const pick = <T>(list: T[]): T => list[this.opIndex % list.length] as T;
    if (op === 'merge') {
      const i = this.opIndex % (active.length - 1);
      return this.replace([active[i] as Partition, active[i + 1] as Partition], atNs, 'merge');
    }
    return this.replace([pick(op === 'split' ? splittable : active)], atNs, op);
  }

  private replace(parents: Partition[], atNs: bigint, op: ChurnEvent['op']): ChurnEvent {
    const lo = Math.min(...parents.map((p) => p.lo));
    const hi = Math.max(...parents.map((p) => p.hi));
    const tokens = parents.map((p) => p.token);
    const ranges: Array<[number, number]> =
      op === 'split'
        ? [
            [lo, lo + Math.floor((hi - lo) / 2)],
            [lo + Math.floor((hi - lo) / 2), hi],
          ]
        : [[lo, hi]];
    const children = ranges.map(([a, b]) => this.add(a, b, atNs, tokens));
    // Every other split comes as one record per child, so readers meet both forms under churn.
    const each = op === 'split' && this.splits++ % 2 === 1;
    for (const p of parents) {
      p.endNs = atNs;
      if (each) p.childRecordEach = true;
      p.children = children.map((c) => c.token);
    }
    return { op, atNs, parents: tokens, children: p2t(children) };
  }

  /**
   * Drops records older than `beforeNs` (retention). Expired partitions stay as tombstones so that a query on
   * one is answered with the service's "no longer valid" error rather than "invalid token".
   */
  expire(beforeNs: bigint): void {
    for (const p of this.byToken.values()) {
      if (p.records.length > 0 && (p.records[0]?.commitTimestampNs ?? beforeNs) < beforeNs) {
        p.records = p.records.filter((r) => r.commitTimestampNs >= beforeNs);
      }
    }
  }
}

function p2t(list: Partition[]): string[] {
  return list.map((p) => p.token);
}

/** Index of the first record with commit timestamp ≥ `ts` (records are sorted by commit timestamp). */
export function firstRecordAtOrAfter(records: DataChangeRecord[], ts: bigint): number {
  let lo = 0;
  let hi = records.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((records[mid]?.commitTimestampNs ?? ts) < ts) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
