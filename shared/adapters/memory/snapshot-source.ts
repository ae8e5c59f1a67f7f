/**
 * In-memory {@link SnapshotSource}: multi-version tables (every write kept with its commit timestamp), so a
 * snapshot at T sees exactly the rows committed at or before T, as a Spanner batch read-only transaction
 * does. Snapshots older than the version retention fail with FAILED_PRECONDITION like the service. Tests
 * can make a read fail after K rows (a worker crash mid-partition). A row can be written with the wire form
 * of some columns, which reads hand back as its key values; without one, the writer value stands for it
 * (the two are equal for INT64, STRING and BOOL).
 */
import type { JsonValue } from '../../domain/change-record';
import type { TableSchema } from '../../domain/information-schema';
import type { Timestamp } from '../../domain/timestamp';
import type { WriterValue } from '../../domain/value-mapping';
import {
  KEY_VALUES,
  type PartitionRequest,
  type Snapshot,
  type SnapshotRow,
  type SnapshotSource,
} from '../../ports/snapshot-source';

type Row = Record<string, WriterValue>;

interface Version {
  at: Timestamp;
  row: Row | null;
  wire?: Record<string, JsonValue> | undefined;
}

/** An error shaped like a gRPC status error of the Spanner client. */
export class MemorySpannerError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(`${code} ${message}`);
  }
}

interface Handle {
  table: string;
  columns: string[];
  part: number;
  of: number;
}

function keyText(row: Row, primaryKey: string[]): string {
  return JSON.stringify(primaryKey.map((k) => row[k] ?? null));
}

/** Stable, key-derived partition of a row (so a re-read partition yields the same rows). */
function bucketOf(key: string, of: number): number {
  let h = 0;
  for (const c of key) h = (Math.imul(h, 31) + c.charCodeAt(0)) >>> 0;
  return h % of;
}

/** In-memory snapshot source over versioned tables. */
export class MemorySnapshotSource implements SnapshotSource {
  private readonly tables = new Map<string, { primaryKey: string[]; rows: Map<string, Version[]> }>();
  private readonly transactions = new Map<string, Timestamp>();
  private nextTransaction = 1;
  private failure: { afterRows: number; error: Error; times: number } | undefined;
  /** Every partition request received (tests check Data Boost and priority were passed through). */
  readonly partitionRequests: PartitionRequest[] = [];
  /** Number of `read` calls. */
  reads = 0;
  closed: string[] = [];

  /**
   * @param now the database clock; strong snapshots read at `now()`.
   * @param retentionNs `version_retention_period` in nanoseconds.
   */
  constructor(
    private readonly now: () => Timestamp,
    private readonly retentionNs = 3_600_000_000_000n,
  ) {}

  /** Commits a row (`deleted`: deletes the key) at `at`; `wire`: the wire form of some of its columns. */
  write(
    table: string,
    primaryKey: string[],
    row: Row,
    at: Timestamp,
    deleted = false,
    wire?: Record<string, JsonValue>,
  ): void {
    const t = this.tables.get(table) ?? { primaryKey, rows: new Map<string, Version[]>() };
    this.tables.set(table, t);
    const key = keyText(row, primaryKey);
    const versions = t.rows.get(key) ?? [];
    versions.push({ at, row: deleted ? null : { ...row }, wire });
    versions.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
    t.rows.set(key, versions);
  }

  /** The rows of `table` as of `at`, in key order. */
  rowsAt(table: string, at: Timestamp): Row[] {
    return this.versionsAt(table, at).map((v) => v.row as Row);
  }

  private versionsAt(table: string, at: Timestamp): Version[] {
    const t = this.tables.get(table);
    if (!t) return [];
    const out: Array<[string, Version]> = [];
    for (const [key, versions] of t.rows) {
      const visible = versions.filter((v) => v.at <= at).pop();
      if (visible?.row) out.push([key, visible]);
    }
    return out.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v);
  }

  /** The next `times` reads throw `error` after yielding `afterRows` rows. */
  failReads(afterRows: number, error: Error, times = 1): void {
    this.failure = { afterRows, error, times };
  }

  private checkRetention(at: Timestamp): void {
    const earliest = this.now() - this.retentionNs;
    if (at < earliest) {
      throw new MemorySpannerError(
        9,
        `FAILED_PRECONDITION: Read timestamp ${at} is earlier than the earliest version time; it is older than the version_retention_period`,
      );
    }
  }

  async open(readTimestamp?: Timestamp): Promise<Snapshot> {
    const at = readTimestamp ?? this.now();
    this.checkRetention(at);
    const transaction = `mem-txn-${this.nextTransaction++}`;
    this.transactions.set(transaction, at);
    return { transaction, readTimestamp: at };
  }

  async partition(snapshot: Snapshot, request: PartitionRequest): Promise<string[]> {
    this.partitionRequests.push(structuredClone(request));
    this.transactionAt(snapshot);
    const of = Math.max(1, Math.min(request.maxPartitions ?? 3, 3));
    return Array.from({ length: of }, (_, part) =>
      Buffer.from(JSON.stringify({ table: request.table.name, columns: request.columns, part, of })).toString(
        'base64',
      ),
    );
  }

  private transactionAt(snapshot: Snapshot): Timestamp {
    const at = this.transactions.get(snapshot.transaction);
    if (at === undefined)
      throw new MemorySpannerError(5, `NOT_FOUND: Transaction not found: ${snapshot.transaction}`);
    return at;
  }

  async *read(
    snapshot: Snapshot,
    partition: string,
    table: TableSchema,
    _signal?: AbortSignal,
    keyColumns: readonly string[] = [],
  ): AsyncIterable<SnapshotRow> {
    this.reads++;
    const at = this.transactionAt(snapshot);
    this.checkRetention(at);
    const handle = JSON.parse(Buffer.from(partition, 'base64').toString()) as Handle;
    if (handle.table !== table.name)
      throw new MemorySpannerError(3, 'INVALID_ARGUMENT: partition of another table');
    const failure = this.failure && this.failure.times > 0 ? this.failure : undefined;
    if (failure) failure.times--;
    let yielded = 0;
    const keys = keyColumns.filter((c) => handle.columns.includes(c));
    for (const { row, wire } of this.versionsAt(table.name, at) as Array<Version & { row: Row }>) {
      if (bucketOf(keyText(row, table.primaryKey), handle.of) !== handle.part) continue;
      if (failure && yielded >= failure.afterRows) throw failure.error;
      const out: SnapshotRow = Object.fromEntries(handle.columns.map((c) => [c, row[c] ?? null]));
      if (keys.length > 0)
        out[KEY_VALUES] = Object.fromEntries(keys.map((c) => [c, wire?.[c] ?? row[c] ?? null]));
      yield out;
      yielded++;
    }
    if (failure) throw failure.error;
  }

  async close(snapshot: Snapshot): Promise<void> {
    // Like the Node client's BatchTransaction.close(): local only; the transaction stays readable.
    this.closed.push(snapshot.transaction);
  }
}
