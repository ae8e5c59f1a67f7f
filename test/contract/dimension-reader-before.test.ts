/**
 * Lookups of rows committed before their dimension existed, through the Spanner dimension reader and
 * catalog against the emulator (official client, both dialects; the emulator keeps schema versions,
 * ADR-1304): the plan at the old commit timestamp resolves against the dimension as it is now, and a read
 * as of a commit from before `CREATE TABLE Customers` gives NULLs counted missing, one from before
 * `ADD COLUMN Segment` reads the other columns and gives that one NULL (ADR-2123), instead of failing the
 * partition on Spanner's NOT_FOUND.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { createTestDatabase, type TestDatabase } from '../../local/emulators/spanner/client';
import { type RunningSpannerEmulator, startSpannerEmulator } from '../../local/emulators/spanner/server';
import { SpannerCatalogReader } from '../../shared/adapters/spanner/catalog';
import { SpannerDimensionReader } from '../../shared/adapters/spanner/dimension-reader';
import { Enrichments } from '../../shared/app/enrichment/apply';
import { resolveTableLookups } from '../../shared/app/tables/lookup-resolution';
import type { Dialect } from '../../shared/domain/change-record';
import { lookupsSchema } from '../../shared/domain/enrichment/lookups';
import { fromSecondsAndNanos, type Timestamp } from '../../shared/domain/timestamp';

const DDL: Record<Dialect, { orders: string; customers: string; segment: string }> = {
  GOOGLE_STANDARD_SQL: {
    orders:
      'CREATE TABLE Orders (OrderId INT64 NOT NULL, Region STRING(8), CustId INT64) PRIMARY KEY (OrderId)',
    customers: `CREATE TABLE Customers (CustomerId INT64 NOT NULL, Region STRING(8) NOT NULL, Name STRING(MAX))
      PRIMARY KEY (Region, CustomerId)`,
    segment: 'ALTER TABLE Customers ADD COLUMN Segment STRING(MAX)',
  },
  POSTGRESQL: {
    orders: 'CREATE TABLE orders (orderid bigint NOT NULL PRIMARY KEY, region varchar(8), custid bigint)',
    customers: `CREATE TABLE customers (customerid bigint NOT NULL, region varchar(8) NOT NULL, name text,
      PRIMARY KEY (region, customerid))`,
    segment: 'ALTER TABLE customers ADD COLUMN segment text',
  },
};

let emu: RunningSpannerEmulator;
const dbs: TestDatabase[] = [];

beforeAll(async () => {
  emu = await startSpannerEmulator({ port: 0 });
});

afterAll(async () => {
  for (const db of dbs) await db.close();
  await emu?.stop();
});

describe.each<Dialect>(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'])(
  'lookups before the dimension existed, %s',
  (dialect) => {
    const n = (s: string) => (dialect === 'POSTGRESQL' ? s.toLowerCase() : s);
    const commitOf = (resp: {
      commitTimestamp?: { seconds?: unknown; nanos?: number | null } | null;
    }): Timestamp =>
      fromSecondsAndNanos(String(resp.commitTimestamp!.seconds), resp.commitTimestamp!.nanos ?? 0);

    it('gives NULLs, counted missing, as of a commit before CREATE TABLE, and NULL for a column added later', async () => {
      const db = await createTestDatabase(emu, dialect, [DDL[dialect].orders]);
      dbs.push(db);
      const { database } = db;
      const ddl = async (statement: string) => {
        const [op] = await database.updateSchema([statement]);
        await op.promise();
      };
      const order = { [n('OrderId')]: '1', [n('Region')]: 'eu', [n('CustId')]: '7' };
      const t0 = commitOf((await database.table(n('Orders')).upsert([order]))[0]);
      await ddl(DDL[dialect].customers);
      const customer = { [n('Region')]: 'eu', [n('CustomerId')]: '7', [n('Name')]: 'Ann' };
      const t1 = commitOf((await database.table(n('Customers')).upsert([customer]))[0]);
      await ddl(DDL[dialect].segment);
      const t2 = commitOf(
        (await database.table(n('Customers')).upsert([{ ...customer, [n('Segment')]: 'smb' }]))[0],
      );

      const catalog = new SpannerCatalogReader(database);
      const reader = new SpannerDimensionReader(database, (t) => catalog.tableSchema(t));
      // The service's own answer to a read of a table its schema of that time lacks.
      await expect(reader.read(n('Customers'), [['eu', '7']], [n('Name')], t0)).rejects.toMatchObject({
        code: 5,
      });

      // Planned at the first record's commit timestamp (a backlog), when Customers did not exist yet.
      const config = lookupsSchema.parse([
        {
          table: n('Customers'),
          key: { [n('CustomerId')]: n('CustId'), [n('Region')]: n('Region') },
          columns: [n('Name'), n('Segment')],
          prefix: 'c_',
        },
      ]);
      const fact = await catalog.tableSchema(n('Orders'), { at: t0 });
      const lookups = await resolveTableLookups(catalog, fact, config, t0);
      const enrichments = Enrichments.over({ dimensions: reader, catalog });
      const [name, segment] = [`c_${n('Name')}`, `c_${n('Segment')}`];
      const rows = [];
      for (const at of [t0, t1, t2]) rows.push((await enrichments.forRows(lookups, [order], at))[0]);
      expect(rows).toEqual([
        { [name]: null, [segment]: null },
        { [name]: 'Ann', [segment]: null },
        { [name]: 'Ann', [segment]: 'smb' },
      ]);
      expect(enrichments.stats()['Orders.lookups[0]'.replace('Orders', n('Orders'))]).toMatchObject({
        missing: 1,
        unresolved: 0,
      });
    });
  },
);
