/**
 * The demo workload: seeded inserts, updates, deletes and multi-table transactions on the demo tables,
 * through the official client. It keeps a journal of every mod it committed (table, keys, mod type, commit
 * timestamp) — what the verifier expects to find in the history tables — and the last commit timestamp,
 * which is what "caught up" means. Each transaction touches a key at most once, so one write is one mod.
 */
import type { Database } from '@google-cloud/spanner';
import { formatTimestamp, fromSecondsAndNanos, type Timestamp } from '../shared/domain/timestamp';
import type { DemoSchema, DemoTable } from './demo-schema';
import type { Random } from './random';
import { rowValues, someValues, type WireRow } from './values';

/** One mod the workload committed. */
export interface CommittedMod {
  table: string;
  keys: Record<string, string>;
  modType: 'INSERT' | 'UPDATE' | 'DELETE';
  /** RFC 3339, nine fractional digits. */
  commitTimestamp: string;
}

/** One write of a transaction. */
interface Write {
  table: DemoTable;
  modType: CommittedMod['modType'];
  row: WireRow;
}

/** Counters the live view shows. */
export interface WorkloadStats {
  transactions: number;
  mods: number;
  failures: number;
  lastError: string | null;
}

type CommitTimestampProto = { seconds?: unknown; nanos?: unknown } | null | undefined;

function commitTimestampOf(proto: CommitTimestampProto): Timestamp {
  if (!proto) throw new Error('commit response carries no commit timestamp');
  return fromSecondsAndNanos(String(proto.seconds ?? 0), Number(proto.nanos ?? 0));
}

function keyOf(table: DemoTable, row: WireRow): Record<string, string> {
  return Object.fromEntries(table.key.map((k) => [k, String(row[k])]));
}

/** Live rows of one table, as the workload last wrote them. */
class Rows {
  readonly byKey = new Map<string, WireRow>();
  constructor(readonly table: DemoTable) {}
  id(row: WireRow): string {
    return JSON.stringify(this.table.key.map((k) => row[k]));
  }
  any(rng: Random): WireRow | undefined {
    if (this.byKey.size === 0) return undefined;
    return [...this.byKey.values()][rng.int(0, this.byKey.size - 1)];
  }
}

/** The seeded demo workload on one database. */
export class Workload {
  readonly journal: CommittedMod[] = [];
  readonly stats: WorkloadStats = { transactions: 0, mods: 0, failures: 0, lastError: null };
  /** Commit timestamp of the last committed transaction (null before the first). */
  lastCommit: Timestamp | null = null;
  private readonly customers: Rows;
  private readonly orders: Rows;
  private nextCustomer = 1;
  private nextOrder = 1;
  private running: Promise<void> | null = null;
  private stopping = false;

  constructor(
    private readonly database: Database,
    private readonly schema: DemoSchema,
    private readonly rng: Random,
  ) {
    this.customers = new Rows(schema.customers);
    this.orders = new Rows(schema.orders);
  }

  /**
   * Continues on a database that already holds rows (a restored `--data-dir`): updates and deletes pick from
   * them, and new keys start after the largest ones.
   */
  async resume(): Promise<void> {
    for (const rows of [this.customers, this.orders]) {
      const [found] = await this.database.run({ sql: `SELECT * FROM ${rows.table.name}`, json: true });
      for (const r of found as WireRow[]) rows.byKey.set(rows.id(r), r);
    }
    const ids = [...this.customers.byKey.values()].map((r) => Number(r.customer_id) || 0);
    const orders = [...this.orders.byKey.values()].map((r) => Number(String(r.order_id).slice(2)) || 0);
    this.nextCustomer = Math.max(0, ...ids) + 1;
    this.nextOrder = Math.max(0, ...orders) + 1;
  }

  /** Whether the products table already holds rows (a restored `--data-dir`). */
  async hasProducts(): Promise<boolean> {
    const [rows] = await this.database.run({
      sql: `SELECT 1 FROM ${this.schema.products.name} LIMIT 1`,
      json: true,
    });
    return rows.length > 0;
  }

  /** Inserts `count` products before replication starts (only a backfill brings them over). */
  async prefillProducts(count: number): Promise<void> {
    const t = this.schema.products;
    const rows = Array.from({ length: count }, (_, i) =>
      rowValues(t, { sku: `SKU-${String(i + 1).padStart(5, '0')}` }, this.rng),
    );
    await this.database.table(t.name).insert(rows);
  }

  private newCustomer(): Write {
    const row = rowValues(this.schema.customers, { customer_id: String(this.nextCustomer++) }, this.rng);
    return { table: this.schema.customers, modType: 'INSERT', row };
  }

  private newOrder(customerId: string): Write {
    const orderId = `o-${String(this.nextOrder++).padStart(6, '0')}`;
    const row = rowValues(this.schema.orders, { order_id: orderId }, this.rng);
    return { table: this.schema.orders, modType: 'INSERT', row: { ...row, customer_id: customerId } };
  }

  private change(rows: Rows, modType: 'UPDATE' | 'DELETE'): Write[] {
    const current = rows.any(this.rng);
    if (!current) return [];
    const key = Object.fromEntries(rows.table.key.map((k) => [k, current[k] ?? null]));
    const row = modType === 'UPDATE' ? { ...key, ...someValues(rows.table, this.rng) } : key;
    return [{ table: rows.table, modType, row }];
  }

  /** The writes of the next transaction, chosen by the seeded generator. */
  private plan(): Write[] {
    const roll = this.rng.next();
    if (this.customers.byKey.size < 5 || roll < 0.25) return [this.newCustomer()];
    if (roll < 0.45) return this.change(this.customers, 'UPDATE');
    if (roll < 0.52) return this.change(this.customers, 'DELETE');
    if (roll < 0.75) {
      // Multi-table: an order and its customer's new balance, one transaction.
      const update = this.change(this.customers, 'UPDATE');
      const customerId = String(update[0]?.row.customer_id ?? '0');
      return [this.newOrder(customerId), ...update];
    }
    if (roll < 0.92) return this.change(this.orders, 'UPDATE');
    return this.change(this.orders, 'DELETE');
  }

  private async commit(writes: Write[]): Promise<Timestamp> {
    return this.database.runTransactionAsync(async (tx) => {
      for (const w of writes) {
        if (w.modType === 'INSERT') tx.insert(w.table.name, w.row);
        else if (w.modType === 'UPDATE') tx.update(w.table.name, w.row);
        else tx.deleteRows(w.table.name, [w.table.key.map((k) => w.row[k] as string)]);
      }
      const [response] = await tx.commit();
      return commitTimestampOf(response.commitTimestamp as CommitTimestampProto);
    });
  }

  private record(writes: Write[], at: Timestamp): void {
    const commitTimestamp = formatTimestamp(at);
    for (const w of writes) {
      const rows = w.table === this.schema.customers ? this.customers : this.orders;
      const id = rows.id(w.row);
      if (w.modType === 'DELETE') rows.byKey.delete(id);
      else rows.byKey.set(id, { ...(rows.byKey.get(id) ?? {}), ...w.row });
      this.journal.push({
        table: w.table.name,
        keys: keyOf(w.table, w.row),
        modType: w.modType,
        commitTimestamp,
      });
    }
    this.stats.transactions++;
    this.stats.mods += writes.length;
    if (this.lastCommit === null || at > this.lastCommit) this.lastCommit = at;
  }

  /** Runs one transaction; a failure is counted, not thrown (the model keeps the last committed state). */
  async step(): Promise<void> {
    const writes = this.plan();
    if (writes.length === 0) return;
    try {
      this.record(writes, await this.commit(writes));
    } catch (err) {
      this.stats.failures++;
      this.stats.lastError = (err as Error).message;
    }
  }

  /** Starts a loop of transactions, one every `intervalMs`, until {@link stop}. */
  start(intervalMs: number): void {
    if (this.running) return;
    this.stopping = false;
    this.running = (async () => {
      while (!this.stopping) {
        await this.step();
        await new Promise((r) => setTimeout(r, intervalMs));
      }
    })();
  }

  /** Stops the loop after the transaction in flight. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.running;
    this.running = null;
  }
}
