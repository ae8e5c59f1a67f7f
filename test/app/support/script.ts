/**
 * A scripted change stream for tests: tables `Orders(Id INT64, Val STRING)` and `Items(Id INT64, Val STRING)`,
 * keys spread over slots owned by partitions that split and merge over time. It records the truth (the
 * current rows and every mod) so a test can compare the sinks with it, and serves windows as a
 * {@link ChangeSource} with heartbeats and child-partitions records, like the service.
 */

import { Random } from '../../../local/random';
import type {
  ChangeRecord,
  ColumnType,
  DataChangeRecord,
  JsonValue,
} from '../../../shared/domain/change-record';
import { addMillis, addNanos, type Timestamp } from '../../../shared/domain/timestamp';
import type { ChangeQuery, ChangeSource } from '../../../shared/ports/change-source';

export const COLUMNS: ColumnType[] = [
  { name: 'Id', type: { code: 'INT64' }, isPrimaryKey: true, ordinalPosition: 1 },
  { name: 'Val', type: { code: 'STRING' }, isPrimaryKey: false, ordinalPosition: 2 },
];
const SLOTS = 16;

interface Part {
  token: string;
  parents: string[];
  start: Timestamp;
  end: Timestamp | null;
  children: Array<{ token: string; parents: string[] }>;
  slots: number[];
  records: DataChangeRecord[];
}

/** A mod to commit: value null deletes. */
export interface ScriptMod {
  table: string;
  id: number;
  val: string | null;
}

/** Deterministic PRNG (mulberry32, the workload's generator): a float in [0, 1) per call. */
export function prng(seed: number): () => number {
  const random = new Random(seed);
  return () => random.next();
}

/** Thrown by the source to mimic a gRPC failure. */
export class GrpcLikeError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export class ScriptedStream implements ChangeSource {
  readonly parts = new Map<string, Part>();
  readonly roots: string[] = [];
  /** table → id → row (current truth). */
  readonly rows = new Map<string, Map<number, { Id: string; Val: string }>>();
  /** table → id → versions, for reads at a commit timestamp. */
  readonly versions = new Map<string, Map<number, Array<{ at: Timestamp; val: string | null }>>>();
  mods = 0;
  last: Timestamp;
  private txn = 0;
  private nextToken = 0;
  /** One-shot fault: fail the next read of a partition after `after` records with gRPC `code`. */
  fault: { after: number; code: number } | null = null;
  /** Called as each data-change record is read (e.g. to let the clock move while a window is read). */
  onRecord: (() => void) | null = null;
  reads = 0;
  /**
   * Records to deliver with a `Val` that does not match its STRING column (`table/id` → the value), as a
   * stream value the pipeline cannot map would: a poison record. Deleting the entry is the "fix".
   */
  readonly poisoned = new Map<string, JsonValue>();

  constructor(
    readonly t0: Timestamp,
    rootCount = 2,
  ) {
    this.last = t0;
    // Any number of roots (a stream starts with as many partitions as Spanner chooses): contiguous shares,
    // the remainder spread among them when the slots do not divide evenly, so every slot has an owner.
    if (rootCount < 1 || rootCount > SLOTS) throw new Error(`between 1 and ${SLOTS} roots, not ${rootCount}`);
    for (let i = 0; i < rootCount; i++) {
      const from = Math.floor((i * SLOTS) / rootCount);
      const to = Math.floor(((i + 1) * SLOTS) / rootCount);
      const slots = Array.from({ length: to - from }, (_, k) => from + k);
      this.roots.push(this.addPart([], t0, slots));
    }
  }

  private addPart(parents: string[], start: Timestamp, slots: number[]): string {
    const token = `tok-${this.nextToken++}`;
    this.parts.set(token, { token, parents, start, end: null, children: [], slots, records: [] });
    return token;
  }

  live(at: Timestamp): Part[] {
    return [...this.parts.values()].filter((p) => p.start <= at && (p.end === null || at < p.end));
  }

  private owner(slot: number, at: Timestamp): Part {
    const p = this.live(at).find((x) => x.slots.includes(slot));
    if (!p) throw new Error(`no partition owns slot ${slot} at ${at}`);
    return p;
  }

  /**
   * Commits one transaction at `at` (strictly after the previous event, or at its timestamp with
   * `sameTimestamp`: transactions touching non-overlapping data may share a commit timestamp,
   * spanner-change-streams.md §3 "Same commit timestamp"). `system` marks a TTL transaction
   * (`is_system_transaction`, `transaction_tag` 'RowDeletionPolicy', §2.2).
   */
  commit(
    at: Timestamp,
    mods: ScriptMod[],
    options: { sameTimestamp?: boolean; system?: boolean } = {},
  ): void {
    if (at < this.last || (at === this.last && !options.sameTimestamp))
      throw new Error('script time must move forward');
    this.last = at;
    const txn = `txn-${this.txn++}`;
    const groups = new Map<
      string,
      { part: Part; table: string; type: string; mods: DataChangeRecord['mods'] }
    >();
    for (const m of mods) {
      const part = this.owner(m.id % SLOTS, at);
      const table = this.rows.get(m.table) ?? new Map();
      this.rows.set(m.table, table);
      const existed = table.has(m.id);
      const type = m.val === null ? 'DELETE' : existed ? 'UPDATE' : 'INSERT';
      if (m.val === null && !existed) continue;
      if (m.val === null) table.delete(m.id);
      else table.set(m.id, { Id: String(m.id), Val: m.val });
      const vs = this.versions.get(m.table) ?? new Map();
      this.versions.set(m.table, vs);
      vs.set(m.id, [...(vs.get(m.id) ?? []), { at, val: m.val }]);
      const key = `${part.token}/${m.table}/${type}`;
      const g = groups.get(key) ?? { part, table: m.table, type, mods: [] };
      groups.set(key, g);
      g.mods.push({
        keys: { Id: String(m.id) },
        newValues: m.val === null ? {} : { Val: m.val },
        oldValues: {},
      });
      this.mods++;
    }
    let seq = 0;
    const all = [...groups.values()];
    for (const g of all) {
      g.part.records.push({
        kind: 'data-change',
        commitTimestamp: at,
        recordSequence: String(seq++).padStart(8, '0'),
        serverTransactionId: txn,
        isLastRecordInTransactionInPartition: true,
        tableName: g.table,
        columnTypes: COLUMNS,
        mods: g.mods,
        modType: g.type as DataChangeRecord['modType'],
        valueCaptureType: 'NEW_ROW',
        numberOfRecordsInTransaction: all.length,
        numberOfPartitionsInTransaction: new Set(all.map((x) => x.part.token)).size,
        transactionTag: options.system ? 'RowDeletionPolicy' : '',
        isSystemTransaction: options.system === true,
      });
    }
  }

  /** Report each child of a split or merge in its own child-partitions record (the service may). */
  childRecordEach = false;

  /** Splits a live partition at `at` into two children. */
  split(at: Timestamp, token: string): void {
    const p = this.parts.get(token)!;
    if (p.slots.length < 2 || p.end !== null) return;
    this.last = at;
    p.end = at;
    const half = p.slots.length / 2;
    for (const slots of [p.slots.slice(0, half), p.slots.slice(half)]) {
      const child = this.addPart([token], at, slots);
      p.children.push({ token: child, parents: [token] });
    }
  }

  /** Merges two live partitions at `at` into one child with both as parents. */
  merge(at: Timestamp, a: string, b: string): void {
    const pa = this.parts.get(a)!;
    const pb = this.parts.get(b)!;
    if (pa.end !== null || pb.end !== null || a === b) return;
    this.last = at;
    pa.end = at;
    pb.end = at;
    const parents = [a, b];
    const child = this.addPart(parents, at, [...pa.slots, ...pb.slots]);
    pa.children.push({ token: child, parents });
    pb.children.push({ token: child, parents });
  }

  async *read(query: ChangeQuery): AsyncIterable<ChangeRecord> {
    this.reads++;
    if (query.partitionToken === null) {
      yield {
        kind: 'child-partitions',
        startTimestamp: query.from,
        recordSequence: '0',
        childPartitions: this.roots.map((token) => ({ token, parentPartitionTokens: [] })),
      };
      return;
    }
    const p = this.parts.get(query.partitionToken);
    if (!p) throw new GrpcLikeError(5, `partition ${query.partitionToken} not found`);
    const to = query.to ?? this.last;
    const out: ChangeRecord[] = p.records.filter(
      (r) => r.commitTimestamp >= query.from && r.commitTimestamp <= to,
    );
    for (
      let hb = addMillis(query.from, query.heartbeatMs);
      hb <= to && (p.end === null || hb < p.end);
      hb = addMillis(hb, query.heartbeatMs)
    ) {
      out.push({ kind: 'heartbeat', timestamp: hb });
    }
    out.sort((x, y) =>
      ts(x) < ts(y) ? -1 : ts(x) > ts(y) ? 1 : x.kind === 'heartbeat' ? 1 : y.kind === 'heartbeat' ? -1 : 0,
    );
    const fault = this.fault;
    this.fault = null;
    let n = 0;
    for (const r of out) {
      if (fault && n++ >= fault.after) throw new GrpcLikeError(fault.code, 'injected stream failure');
      if (r.kind === 'data-change') this.onRecord?.();
      yield this.asDelivered(r);
    }
    if (p.end !== null && p.end >= query.from && p.end <= to) yield* this.childRecords(p.end, p.children);
  }

  /**
   * The partition's end as the service may report it: one child-partitions record, or (with
   * `childRecordEach`) one record per child at the same start timestamp, ordered by `record_sequence`
   * (reference spanner-change-streams.md, child partitions records).
   */
  private *childRecords(
    at: Timestamp,
    children: { token: string; parents: string[] }[],
  ): Iterable<ChangeRecord> {
    const groups = this.childRecordEach ? children.map((c) => [c]) : [children];
    for (const [i, group] of groups.entries()) {
      yield {
        kind: 'child-partitions',
        startTimestamp: at,
        recordSequence: String(i).padStart(8, '0'),
        childPartitions: group.map((c) => ({ token: c.token, parentPartitionTokens: c.parents })),
      };
    }
  }

  /** A record as delivered: with the wrong column types when its key is poisoned. */
  private asDelivered(r: ChangeRecord): ChangeRecord {
    if (r.kind !== 'data-change') return r;
    const val = this.poisoned.get(`${r.tableName}/${r.mods[0]?.keys.Id}`);
    if (val === undefined) return r;
    return { ...r, mods: r.mods.map((m) => ({ ...m, newValues: { ...m.newValues, Val: val } })) };
  }

  /** The row at exactly `at` (for reads at a commit timestamp). */
  rowAt(table: string, id: number, at: Timestamp): string | null {
    const vs = this.versions.get(table)?.get(id) ?? [];
    let val: string | null = null;
    for (const v of vs) if (v.at <= at) val = v.val;
    return val;
  }
}

function ts(r: ChangeRecord): Timestamp {
  return r.kind === 'data-change'
    ? r.commitTimestamp
    : r.kind === 'heartbeat'
      ? r.timestamp
      : r.startTimestamp;
}

export { addNanos };
