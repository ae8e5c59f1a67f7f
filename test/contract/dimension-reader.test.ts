/**
 * The dimension-reader contract against memory and against Spanner on the emulator (official client), both
 * dialects: a key set read in one call at exactly a commit timestamp or strongly, rows back in request order
 * with NULL for missing keys, composite keys in the declared primary-key order, INT64 keys at the extremes;
 * and the enricher's retries of an ABORTED read injected through the emulator's faults.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { MemoryDimensionReader } from '../../shared/adapters/memory/dimension-reader';
import { SpannerCatalogReader } from '../../shared/adapters/spanner/catalog';
import { SpannerDimensionReader } from '../../shared/adapters/spanner/dimension-reader';
import { Enricher } from '../../shared/app/enrichment/enricher';
import type { Dialect } from '../../shared/domain/change-record';
import { lookupsSchema, resolveLookups } from '../../shared/domain/enrichment/lookups';
import { addNanos, fromSecondsAndNanos, type Timestamp } from '../../shared/domain/timestamp';
import type { DimensionReader, KeyValues } from '../../shared/ports/dimension-reader';
import { dialectDatabases } from '../emulators/spanner/support/dialect-databases';

const MAX = '9223372036854775807';
const MIN = '-9223372036854775808';

/** A reader over a dimension table `Customers (CustomerId INT64, Region STRING, Segment STRING)` keyed (Region, CustomerId). */
interface Fixture {
  reader: DimensionReader;
  table: string;
  cols: { segment: string };
  /** Writes rows (key in declared order: region, id); resolves to the commit timestamp. */
  write(rows: Array<{ region: string; id: string; segment: string }>): Promise<Timestamp>;
}

function contract(label: string, make: () => Promise<Fixture>): void {
  describe(`DimensionReader contract: ${label}`, () => {
    it('reads a key set at exactly a commit timestamp, in request order, null where missing', async () => {
      const f = await make();
      const t1 = await f.write([
        { region: 'eu', id: '1', segment: 'smb' },
        { region: 'eu', id: MAX, segment: 'max' },
        { region: 'us', id: MIN, segment: 'min' },
      ]);
      const t2 = await f.write([{ region: 'eu', id: '1', segment: 'enterprise' }]);
      const keys: KeyValues[] = [
        ['us', MIN],
        ['eu', '404'],
        ['eu', '1'],
        ['eu', MAX],
      ];
      const seg = f.cols.segment;
      const at1 = await f.reader.read(f.table, keys, [seg], t1);
      expect(at1.rows.map((r) => r?.[seg] ?? null)).toEqual(['min', null, 'smb', 'max']);
      const before = await f.reader.read(f.table, keys, [seg], addNanos(t1, -1));
      expect(before.rows).toEqual([null, null, null, null]);
      const at2 = await f.reader.read(f.table, [['eu', '1']], [seg], t2);
      expect(at2.rows[0]?.[seg]).toBe('enterprise');
      expect((await f.reader.read(f.table, [['eu', '1']], [seg], addNanos(t2, -1))).rows[0]?.[seg]).toBe(
        'smb',
      );
      expect((await f.reader.read(f.table, [['eu', '1']], [seg], 'latest')).rows[0]?.[seg]).toBe(
        'enterprise',
      );
      expect((await f.reader.read(f.table, [], [seg], 'latest')).rows).toEqual([]);
    });
  });
}

contract('in-memory', async () => {
  const reader = new MemoryDimensionReader();
  let clock = 1_700_000_000_000_000_000n;
  return {
    reader,
    table: 'Customers',
    cols: { segment: 'Segment' },
    write: async (rows) => {
      clock += 1000n;
      const at = fromSecondsAndNanos(String(clock / 1_000_000_000n), Number(clock % 1_000_000_000n));
      for (const r of rows) reader.write('Customers', [r.region, r.id], at, { Segment: r.segment });
      return at;
    },
  };
});

const DDL: Record<Dialect, string[]> = {
  GOOGLE_STANDARD_SQL: [
    `CREATE TABLE Customers (CustomerId INT64 NOT NULL, Region STRING(8) NOT NULL, Segment STRING(MAX))
     PRIMARY KEY (Region, CustomerId)`,
    'CREATE TABLE Orders (OrderId INT64 NOT NULL, Region STRING(8), CustId INT64) PRIMARY KEY (OrderId)',
  ],
  POSTGRESQL: [
    `CREATE TABLE customers (customerid bigint NOT NULL, region varchar(8) NOT NULL, segment text,
     PRIMARY KEY (region, customerid))`,
    'CREATE TABLE orders (orderid bigint NOT NULL PRIMARY KEY, region varchar(8), custid bigint)',
  ],
};

const spanner = dialectDatabases(DDL);

/** The next `times` StreamingRead calls answer NOT_FOUND "Session not found"; returns the fault. */
const sessionNotFound = (times: number) =>
  spanner.emu.admin.faults.add({
    method: 'StreamingRead',
    times,
    code: 5,
    message: 'Session not found: injected',
  });

function spannerFixture(dialect: Dialect) {
  const pg = dialect === 'POSTGRESQL';
  const n = (s: string) => (pg ? s.toLowerCase() : s);
  const database = spanner.db(dialect).database;
  const catalog = new SpannerCatalogReader(database);
  const reader = new SpannerDimensionReader(database, (t) => catalog.tableSchema(t));
  return {
    catalog,
    n,
    fixture: {
      reader,
      table: n('Customers'),
      cols: { segment: n('Segment') },
      write: async (rows: Array<{ region: string; id: string; segment: string }>) => {
        const [resp] = await database.table(n('Customers')).upsert(
          rows.map((r) => ({
            [n('Region')]: r.region,
            [n('CustomerId')]: r.id,
            [n('Segment')]: r.segment,
          })),
        );
        const c = resp.commitTimestamp!;
        return fromSecondsAndNanos(String(c.seconds), c.nanos ?? 0);
      },
    } satisfies Fixture,
  };
}

describe.each<Dialect>(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'])('Spanner dimension reader, %s', (dialect) => {
  contract(`Spanner (emulator, ${dialect})`, async () => spannerFixture(dialect).fixture);

  it('enriches through a config resolved against INFORMATION_SCHEMA, retrying an injected ABORTED', async () => {
    const { catalog, n, fixture } = spannerFixture(dialect);
    const t = await fixture.write([{ region: 'ap', id: '77', segment: 'gold' }]);
    const [fact, dim] = await Promise.all([
      catalog.tableSchema(n('Orders')),
      catalog.tableSchema(n('Customers')),
    ]);
    // The mapping names the key columns in the other order than declared.
    const config = lookupsSchema.parse([
      {
        table: n('Customers'),
        key: { [n('CustomerId')]: n('CustId'), [n('Region')]: n('Region') },
        columns: [n('Segment')],
        prefix: 'c_',
      },
    ]);
    const resolved = resolveLookups(fact, config, new Map([[dim.name, dim]]));
    if (!resolved.ok) throw new Error(resolved.problems.join('\n'));
    spanner.emu.admin.faults.add({ method: 'StreamingRead', times: 2, code: 10, message: 'injected abort' });
    const e = new Enricher(resolved.lookups[0]!, { reader: fixture.reader, sleep: async () => {} });
    const values = { [n('OrderId')]: '1', [n('Region')]: 'ap', [n('CustId')]: '77' };
    expect(await e.enrich([{ values, at: t }])).toEqual([{ [`c_${n('Segment')}`]: 'gold' }]);
    expect(e.stats()).toMatchObject({ reads: 3, retries: 2, missing: 0 });
  });

  it('reads in one request (no BeginTransaction) and tries another session when the service forgot one', async () => {
    const { n, fixture } = spannerFixture(dialect);
    const t = await fixture.write([{ region: 'ap', id: '79', segment: 'gold' }]);
    // A snapshot would begin a transaction before reading: with every BeginTransaction failing, only a
    // single-use read gets its rows.
    const begin = spanner.emu.admin.faults.add({
      method: 'BeginTransaction',
      times: Number.POSITIVE_INFINITY,
      code: 13,
      message: 'injected: no transaction may begin',
    });
    const lost = sessionNotFound(2);
    try {
      const seg = n('Segment');
      expect((await fixture.reader.read(n('Customers'), [['ap', '79']], [seg], t)).rows[0]?.[seg]).toBe(
        'gold',
      );
      expect(
        (await fixture.reader.read(n('Customers'), [['ap', '79']], [seg], 'latest')).rows[0]?.[seg],
      ).toBe('gold');
    } finally {
      spanner.emu.admin.faults.clear(begin);
      spanner.emu.admin.faults.clear(lost);
    }
  });

  it('gives up on a session after three reads the service answered Session not found', async () => {
    const { n, fixture } = spannerFixture(dialect);
    const t = await fixture.write([{ region: 'ap', id: '80', segment: 'gold' }]);
    const lost = sessionNotFound(3);
    try {
      await expect(
        fixture.reader.read(n('Customers'), [['ap', '80']], [n('Segment')], t),
      ).rejects.toMatchObject({
        code: 5,
      });
      expect(
        (await fixture.reader.read(n('Customers'), [['ap', '80']], [n('Segment')], t)).rows[0],
      ).toBeTruthy();
    } finally {
      spanner.emu.admin.faults.clear(lost);
    }
  });

  it('refuses a brought column the dimension no longer has, naming it, instead of reading NULLs', async () => {
    const { n, fixture } = spannerFixture(dialect);
    const t = await fixture.write([{ region: 'ap', id: '78', segment: 'gold' }]);
    await expect(
      fixture.reader.read(n('Customers'), [['ap', '78']], [n('Segment'), n('Tier')], t),
    ).rejects.toThrow(new RegExp(`dimension table ${n('Customers')} has no column ${n('Tier')}`));
  });
});
