/**
 * Lookups applied in the reader's batch path, over in-memory sinks, a catalog with row versions and the
 * in-memory dimension reader: the registry resolves the configured lookups (a bad one is a permanent error
 * naming table, lookup and field) and gives both BigQuery tables the prefixed columns; history rows carry
 * the dimension row as of each commit timestamp, a missing row gives NULLs and is counted, a DELETE is
 * enriched from its old values, a fact column the mod lacks is read from the fact row; replica upserts
 * carry the columns of their last change.
 */
import { MemoryDimensionReader } from '../../shared/adapters/memory/dimension-reader';
import { MemoryObjectStore } from '../../shared/adapters/memory/object-store';
import { MemoryHistorySink, MemoryReplicaSink } from '../../shared/adapters/memory/sinks';
import { Enrichments } from '../../shared/app/enrichment/apply';
import { DeadLetterStore } from '../../shared/app/ledger/dead-letters';
import { replayDeadLetters } from '../../shared/app/operator/dead-letter-replay';
import { validateStream } from '../../shared/app/replication/scheduler/stream-validation';
import { enrichBatch, historyBatches, writeReplica } from '../../shared/app/sinks/sink-writer';
import { TableRegistry } from '../../shared/app/tables/table-registry';
import type {
  DataChangeRecord,
  JsonValue,
  ModType,
  ValueCaptureType,
} from '../../shared/domain/change-record';
import { parseConfigObject } from '../../shared/domain/config';
import { newDeadLetter } from '../../shared/domain/dead-letter';
import { SluiceError } from '../../shared/domain/errors';
import type { TableSchema } from '../../shared/domain/information-schema';
import { TableNotFoundError } from '../../shared/domain/information-schema';
import { createLogger } from '../../shared/domain/log';
import { canonicalKey, type KeyColumn } from '../../shared/domain/row-reads';
import { fromNanos, type Timestamp } from '../../shared/domain/timestamp';
import type { RowsAt, SchemaReadOptions, SpannerCatalog } from '../../shared/ports/spanner-catalog';
import { columnTypesOf, soleRecordOfTransaction } from '../unit/domain/support/change-records';
import { AllTablesCatalog, schemaColumn } from './support/catalog';

const ts = (n: number): Timestamp => fromNanos(1_700_000_000_000_000_000n + BigInt(n));
const col = schemaColumn;
const ORDERS: TableSchema = {
  name: 'Orders',
  primaryKey: ['OrderId'],
  columns: [col('OrderId', 'INT64', 1), col('CustId', 'INT64', 2), col('Status', 'STRING', 3)],
};
const CUSTOMERS: TableSchema = {
  name: 'Customers',
  primaryKey: ['Region', 'CustomerId'],
  columns: [col('Region', 'STRING', 1), col('CustomerId', 'INT64', 2), col('Name', 'STRING', 3)],
};

/** Schemas, and fact rows by version (for mods that lack a lookup's column). */
class Catalog extends AllTablesCatalog implements SpannerCatalog {
  readonly rows: Array<{ at: Timestamp; row: Record<string, JsonValue> | null; id: string }> = [];
  readonly reads: Timestamp[] = [];
  /** When a table (and a column of it added later) came to exist; absent: always. */
  readonly created = new Map<string, { at: Timestamp; columns: Record<string, Timestamp> }>();
  constructor(readonly schemas: TableSchema[]) {
    super();
  }
  /** INFORMATION_SCHEMA as of `at`: a table or column created later is not there yet. */
  async tableSchema(table: string, options: SchemaReadOptions = {}) {
    const s = this.schemas.find((x) => x.name === table);
    const created = this.created.get(table);
    if (!s || (created && options.at !== undefined && options.at < created.at))
      throw new TableNotFoundError(table);
    if (!created || options.at === undefined) return s;
    const at = options.at;
    const since = created.columns;
    return { ...s, columns: s.columns.filter((c) => since[c.name] === undefined || since[c.name]! <= at) };
  }
  async tableSchemas() {
    return this.schemas;
  }
  async readRowsAt(
    _table: string,
    keyColumns: readonly KeyColumn[],
    keys: ReadonlyArray<Record<string, JsonValue>>,
    at: Timestamp,
  ): Promise<RowsAt> {
    this.reads.push(at);
    const wanted = new Set(keys.map((k) => canonicalKey(keyColumns, k)));
    const latest = new Map<string, Record<string, JsonValue> | null>();
    for (const r of this.rows) if (r.at <= at) latest.set(r.id, r.row);
    const rows = [...latest.values()].filter(
      (r): r is Record<string, JsonValue> => r !== null && wanted.has(canonicalKey(keyColumns, r)),
    );
    return { columns: ORDERS.columns.map((c) => ({ name: c.name, type: c.type })), rows };
  }
}

function record(p: {
  at: Timestamp;
  modType?: ModType;
  capture?: ValueCaptureType;
  mods: Array<{ id: string; values?: Record<string, JsonValue>; old?: Record<string, JsonValue> }>;
}): DataChangeRecord {
  return soleRecordOfTransaction({
    commitTimestamp: p.at,
    recordSequence: '00000000',
    serverTransactionId: `tx${p.at}`,
    tableName: 'Orders',
    columnTypes: columnTypesOf(
      ORDERS.columns.map((c) => [c.name, c.type]),
      'OrderId',
    ),
    mods: p.mods.map((m) => ({ keys: { OrderId: m.id }, newValues: m.values ?? {}, oldValues: m.old ?? {} })),
    modType: p.modType,
    valueCaptureType: p.capture,
  });
}

const LOOKUP = {
  table: 'Customers',
  // Named in another order than the declared key (Region, CustomerId).
  key: { CustomerId: 'CustId', Region: 'Region' },
  columns: ['Name'],
  prefix: 'customer_',
};

function setup(lookups: unknown[], schemas = [ORDERS, CUSTOMERS]) {
  const catalog = new Catalog(schemas);
  const replica = new MemoryReplicaSink();
  const history = new MemoryHistorySink();
  const dimensions = new MemoryDimensionReader();
  const log = createLogger(() => {}, {}, 'ERROR');
  const config = parseConfigObject({
    project: 'test-project',
    spanner: { instance: 'inst', database: 'db', stream: 'Changes' },
    bigquery: { dataset: 'ds' },
    ledger: { bucket: 'bucket' },
    tables: { Orders: { replica: 'orders', history: 'orders_history', lookups } },
  });
  const tables = new TableRegistry({ catalog, replica, history }, config, log);
  const enrichments = Enrichments.over({ dimensions, catalog });
  const ports = { catalog, replica, history, tables, enrichments };
  const write = async (records: DataChangeRecord[]) => {
    const enriched = await enrichBatch(ports, records);
    await writeReplica(ports, records, 'fail', log, enriched);
    const out = await historyBatches(tables, records, enriched);
    for (const [destination, rows] of out) {
      const stream = await history.createStream(destination, 'committed');
      const appended = await history.appendAt(destination, stream.name, 0, rows);
      expect(appended.kind).toBe('appended');
    }
  };
  return { catalog, replica, history, dimensions, enrichments, write, config, ports };
}

describe('lookups applied by the reader', () => {
  it('gives both tables the prefixed columns and enriches each mod as of its commit timestamp', async () => {
    const s = setup([{ ...LOOKUP, key: { CustomerId: 'CustId', Region: 'Status' } }]);
    s.dimensions.write('Customers', ['eu', '7'], ts(1), { Region: 'eu', CustomerId: '7', Name: 'Old' });
    s.dimensions.write('Customers', ['eu', '7'], ts(20), { Region: 'eu', CustomerId: '7', Name: 'New' });
    await s.write([
      record({ at: ts(10), mods: [{ id: '1', values: { CustId: '7', Status: 'eu' } }] }),
      record({ at: ts(30), mods: [{ id: '2', values: { CustId: '7', Status: 'eu' } }] }),
      record({ at: ts(31), mods: [{ id: '3', values: { CustId: '8', Status: 'eu' } }] }),
    ]);
    expect(s.history.enrichedFields('orders_history')).toEqual([
      { name: 'customer_Name', type: 'STRING', mode: 'NULLABLE' },
    ]);
    expect(s.replica.table('orders')?.fields.map((f) => f.name)).toContain('customer_Name');
    const rows = s.history.rawRows('orders_history') as unknown as Array<Record<string, unknown>>;
    expect(rows.map((r) => r.customer_Name ?? null)).toEqual(['Old', 'New', null]);
    const replica = new Map(s.replica.rows('orders').map((r) => [r.OrderId, r.customer_Name]));
    expect(replica).toEqual(
      new Map(
        [
          [1, 'Old'],
          [2, 'New'],
          [3, null],
        ].map(([k, v]) => [String(k), v]),
      ),
    );
    const stats = s.enrichments.stats()['Orders.lookups[0]'];
    expect(stats).toMatchObject({ dimension: 'Customers', mode: 'as-of-commit', missing: 1, unresolved: 0 });
    // One read per commit timestamp, never one per row.
    expect(s.dimensions.calls.map((c) => c.keys)).toEqual([1, 1, 1]);
  });

  it('gives NULLs, counted missing, to rows committed before the dimension table or a brought column existed', async () => {
    const customers: TableSchema = {
      ...CUSTOMERS,
      columns: [...CUSTOMERS.columns, col('Segment', 'STRING', 4)],
    };
    const s = setup(
      [{ ...LOOKUP, key: { CustomerId: 'CustId', Region: 'Status' }, columns: ['Name', 'Segment'] }],
      [ORDERS, customers],
    );
    // Customers is created at 20 and given Segment at 40, both after the first order: the plan is made at
    // the first record's commit timestamp (a backlog), when the table did not exist yet.
    s.catalog.created.set('Customers', { at: ts(20), columns: { Segment: ts(40) } });
    s.dimensions.createdAt('Customers', ts(20), { Segment: ts(40) });
    s.dimensions.write('Customers', ['eu', '7'], ts(21), { Region: 'eu', CustomerId: '7', Name: 'Ann' });
    s.dimensions.write('Customers', ['eu', '7'], ts(41), {
      Region: 'eu',
      CustomerId: '7',
      Name: 'Ann',
      Segment: 'smb',
    });
    await s.write([
      record({ at: ts(10), mods: [{ id: '1', values: { CustId: '7', Status: 'eu' } }] }),
      record({ at: ts(30), mods: [{ id: '2', values: { CustId: '7', Status: 'eu' } }] }),
      record({ at: ts(50), mods: [{ id: '3', values: { CustId: '7', Status: 'eu' } }] }),
    ]);
    const rows = s.history.rawRows('orders_history') as unknown as Array<Record<string, unknown>>;
    expect(rows.map((r) => [r.customer_Name ?? null, r.customer_Segment ?? null])).toEqual([
      [null, null],
      ['Ann', null],
      ['Ann', 'smb'],
    ]);
    expect(s.enrichments.stats()['Orders.lookups[0]']).toMatchObject({ missing: 1, unresolved: 0 });
  });

  it('enriches a DELETE from its old values, and reads a key column an update did not carry', async () => {
    const s = setup([{ ...LOOKUP, key: { CustomerId: 'CustId', Region: 'Status' } }]);
    s.dimensions.write('Customers', ['eu', '7'], ts(1), { Region: 'eu', CustomerId: '7', Name: 'Ann' });
    s.catalog.rows.push({ at: ts(5), id: '1', row: { OrderId: '1', CustId: '7', Status: 'eu' } });
    await s.write([
      record({ at: ts(5), mods: [{ id: '1', values: { CustId: '7', Status: 'eu' } }] }),
      // OLD_AND_NEW_VALUES: an update of nothing the lookup uses carries neither CustId nor Status.
      record({ at: ts(6), modType: 'UPDATE', capture: 'OLD_AND_NEW_VALUES', mods: [{ id: '1' }] }),
      record({ at: ts(7), modType: 'DELETE', mods: [{ id: '1', old: { CustId: '7', Status: 'eu' } }] }),
    ]);
    const rows = s.history.rawRows('orders_history') as unknown as Array<Record<string, unknown>>;
    expect(rows.map((r) => [r.mod_type, r.customer_Name])).toEqual([
      ['INSERT', 'Ann'],
      ['UPDATE', 'Ann'],
      ['DELETE', 'Ann'],
    ]);
    expect(s.catalog.reads).toContain(ts(6));
    expect(s.enrichments.stats()['Orders.lookups[0]']).toMatchObject({ missing: 0, unresolved: 0 });
  });

  it('refuses a bad lookup with a permanent error naming table, lookup and field', async () => {
    const s = setup([{ ...LOOKUP, key: { CustomerId: 'CustId' }, columns: ['Name', 'Tier'] }]);
    const err = await s
      .write([record({ at: ts(5), mods: [{ id: '1', values: { CustId: '7' } }] })])
      .catch((e: unknown) => e as Error & { kind: string });
    expect(err).toMatchObject({ kind: 'permanent' });
    expect(err?.message).toContain(
      'tables.Orders.lookups[0].key: does not map primary-key column Region of Customers',
    );
    expect(err?.message).toContain('tables.Orders.lookups[0].columns[1]: Customers has no column Tier');
    await expect(validateStream(s.catalog, s.config)).rejects.toThrow(
      /cannot be replicated:[\s\S]*tables\.Orders\.lookups\[0\]\.columns\[1\]: Customers has no column Tier/,
    );
  });

  it('counts a fact row without a key value as unresolved (NULL columns, never silent)', async () => {
    const s = setup([{ ...LOOKUP, key: { CustomerId: 'CustId', Region: 'Status' } }]);
    await s.write([record({ at: ts(5), mods: [{ id: '1', values: { CustId: '7', Status: null } }] })]);
    const rows = s.history.rawRows('orders_history') as unknown as Array<Record<string, unknown>>;
    expect(rows[0]?.customer_Name).toBeNull();
    expect(s.enrichments.stats()['Orders.lookups[0]']).toMatchObject({ unresolved: 1, missing: 0 });
  });

  it('a dead letter replayed after the fix is enriched as its window would have been', async () => {
    const s = setup([{ ...LOOKUP, key: { CustomerId: 'CustId', Region: 'Status' } }]);
    s.dimensions.write('Customers', ['eu', '7'], ts(1), { Region: 'eu', CustomerId: '7', Name: 'Ann' });
    s.dimensions.write('Customers', ['eu', '7'], ts(20), { Region: 'eu', CustomerId: '7', Name: 'New' });
    const store = new MemoryObjectStore();
    const key = Buffer.alloc(32, 1);
    const deadLetters = new DeadLetterStore(store, 'p', { sealKey: key });
    const rec = record({ at: ts(10), mods: [{ id: '1', values: { CustId: '7', Status: 'eu' } }] });
    const error = new SluiceError('permanent', 'rejected');
    const letter = newDeadLetter({
      pipeline: 'p',
      partition: { id: 'a'.repeat(32), epoch: 0 },
      position: ts(0),
      now: ts(30),
      rejected: [{ record: rec, error }],
      reason: 'permanent:Error',
    });
    await deadLetters.put(letter);
    const log = createLogger(() => {}, {}, 'ERROR');
    const out = await replayDeadLetters(
      {
        ...s.ports,
        deadLetters,
        seal: { key, trustUnsigned: false },
        now: () => ts(40),
        log,
        enrichments: s.enrichments,
      },
      { ids: [letter.id] },
    );
    expect(out.results).toMatchObject([{ outcome: 'replayed', rows: 1 }]);
    // As of the record's commit timestamp, not the replay's.
    expect(s.replica.rows('orders').map((r) => r.customer_Name)).toEqual(['Ann']);
  });

  it('accepts lookups in SLUICE_TABLES and refuses a full cache with the path named', () => {
    expect(() =>
      parseConfigObject({
        project: 'test-project',
        spanner: { instance: 'inst', database: 'db', stream: 'Changes' },
        bigquery: { dataset: 'ds' },
        ledger: { bucket: 'bucket' },
        tables: { Orders: { history: 'h', lookups: [{ ...LOOKUP, mode: 'latest', cache: 'full' }] } },
      }),
    ).toThrow(/tables\.Orders\.lookups\[0\]\.cache: a full-table cache is not supported/);
  });
});
