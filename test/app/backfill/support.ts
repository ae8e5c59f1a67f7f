/** In-memory fixtures for the backfill use cases: a catalog, CDC-applying sinks, and a wired harness. */

import { MemoryHistorySink } from '../../../shared/adapters/memory/history-sink';
import { MemoryObjectStore } from '../../../shared/adapters/memory/object-store';
import { MemorySnapshotSource } from '../../../shared/adapters/memory/snapshot-source';
import { MemoryTaskQueue } from '../../../shared/adapters/memory/task-queue';
import type { BackfillDeps } from '../../../shared/app/backfill/deps';
import { compareChangeSequenceNumbers } from '../../../shared/domain/cdc-sequence';
import type { HistoryRow } from '../../../shared/domain/history-rows';
import type { ChangeStreamScope, TableSchema } from '../../../shared/domain/information-schema';
import { createLogger } from '../../../shared/domain/log';
import type { ReplicaDelete, ReplicaUpsert } from '../../../shared/domain/replica-rows';
import { fromNanos, type Timestamp } from '../../../shared/domain/timestamp';
import type { WriterValue } from '../../../shared/domain/value-mapping';
import type { ReplicaSink } from '../../../shared/ports/sinks';

type Row = Record<string, WriterValue>;

/** A replica that applies CDC like BigQuery: per key, the row with the highest sequence number wins. */
export class CdcReplica implements ReplicaSink {
  readonly tables = new Map<string, Map<string, { sequence: string; row: Row | null }>>();
  readonly ensured: string[] = [];
  written = 0;
  /** Fail the next write calls with this error. */
  failNext: Error[] = [];

  async ensureTable(destination: string): Promise<void> {
    this.ensured.push(destination);
  }

  async write(destination: string, changes: Array<ReplicaUpsert | ReplicaDelete>): Promise<void> {
    const failure = this.failNext.shift();
    if (failure) throw failure;
    const table = this.tables.get(destination) ?? new Map();
    this.tables.set(destination, table);
    for (const c of changes) {
      const key = JSON.stringify(
        Object.keys(c.key)
          .sort()
          .map((k) => c.key[k]),
      );
      const current = table.get(key);
      if (current && compareChangeSequenceNumbers(current.sequence, c.sequence) > 0) continue;
      table.set(key, { sequence: c.sequence, row: c.kind === 'upsert' ? c.row : null });
    }
    this.written += changes.length;
  }

  /** Live rows of a destination, sorted by their JSON. */
  rows(destination: string): Row[] {
    const live = [...(this.tables.get(destination)?.values() ?? [])].flatMap((v) => (v.row ? [v.row] : []));
    return live.sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
  }
}

/** The in-memory history sink, with small requests so a partition's history is several of them. */
export class AppendHistory extends MemoryHistorySink {
  constructor() {
    super({ rowsPerRequest: 2 });
  }
  /** Every row of the raw table `orders_history`. */
  get rows(): HistoryRow[] {
    return this.rawRows('orders_history');
  }
}

export const ORDERS: TableSchema = {
  name: 'Orders',
  columns: [
    { name: 'OrderId', type: { code: 'INT64' }, nullable: false, ordinalPosition: 1 },
    { name: 'Customer', type: { code: 'STRING' }, nullable: true, ordinalPosition: 2 },
    { name: 'Amount', type: { code: 'INT64' }, nullable: true, ordinalPosition: 3 },
    { name: 'Secret', type: { code: 'STRING' }, nullable: true, ordinalPosition: 4 },
  ],
  primaryKey: ['OrderId'],
};

export const ITEMS: TableSchema = {
  name: 'Items',
  columns: [
    { name: 'ItemId', type: { code: 'STRING' }, nullable: false, ordinalPosition: 1 },
    { name: 'Name', type: { code: 'STRING' }, nullable: true, ordinalPosition: 2 },
  ],
  primaryKey: ['ItemId'],
};

/** Everything a test needs, wired over in-memory ports. */
export function harness(options: { retentionNs?: bigint } = {}) {
  let clock = 1_700_000_000_000_000_000n;
  const now = () => fromNanos(clock);
  const lines: string[] = [];
  const scope: ChangeStreamScope = {
    all: false,
    tables: new Map<string, { columns: 'all' | string[] }>([
      ['Orders', { columns: ['Customer', 'Amount'] }],
      ['Items', { columns: 'all' }],
      ['Unconfigured', { columns: 'all' }],
    ]),
  };
  const schemas = new Map([
    ['Orders', ORDERS],
    ['Items', ITEMS],
    ['Unconfigured', { ...ITEMS, name: 'Unconfigured' }],
    ['Unwatched', { ...ITEMS, name: 'Unwatched' }],
  ]);
  let ids = 0;
  const snapshots = new MemorySnapshotSource(now, options.retentionNs);
  const deps: BackfillDeps = {
    config: {
      pipeline: 'demo',
      spanner: { instance: 'inst', database: 'shop', stream: 'Everything' },
      tables: { Orders: { replica: 'orders', history: 'orders_history' }, Items: { replica: 'items' } },
      allTables: null,
      excludedTables: [],
      onBadRecord: 'fail',
    },
    store: new MemoryObjectStore(),
    queue: new MemoryTaskQueue(),
    snapshots,
    catalog: {
      dialect: async () => 'GOOGLE_STANDARD_SQL',
      streamScope: async (name) => (name === 'Everything' ? scope : undefined),
      tableSchema: async (name) => {
        const schema = schemas.get(name);
        if (!schema) throw new Error(`table ${name} not found or has no columns`);
        return schema;
      },
      tableSchemas: async () => [...schemas.values()],
    },
    replica: new CdcReplica(),
    history: new AppendHistory(),
    workerUrl: 'http://127.0.0.1:1/backfills/tasks',
    now,
    newId: () => `job${++ids}`,
    log: createLogger((l) => lines.push(l)),
    batchRows: 2,
  };
  return {
    deps,
    snapshots,
    store: deps.store as MemoryObjectStore,
    queue: deps.queue as MemoryTaskQueue,
    replica: deps.replica as CdcReplica,
    history: deps.history as AppendHistory,
    lines,
    /** Advances the clock by `ns` and returns the new time. */
    tick(ns = 1_000n): Timestamp {
      clock += ns;
      return now();
    },
    now,
  };
}

/** Writes `n` orders at the current time, one commit each, advancing the clock. */
export function seedOrders(h: ReturnType<typeof harness>, n: number): void {
  for (let i = 1; i <= n; i++) {
    const row = { OrderId: String(i), Customer: `c${i}`, Amount: String(i * 10), Secret: 'x' };
    h.snapshots.write('Orders', ['OrderId'], row, h.tick());
  }
}
