/**
 * The Spanner dimension reader on the emulator (official client), both dialects: a key of every key type is
 * found from its wire form — DATE, FLOAT64 (a whole number, ±Infinity), BYTES (empty too), NUMERIC (over its
 * whole range, asked with another scale), UUID (asked in upper case), TIMESTAMP to the nanosecond (before
 * 1970 too), INT64 at the extremes and past 2^53 — and the column types every read reports make a dimension
 * column retyped since its lookup was resolved fail the next read by name, as-of-commit and latest alike.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { Spanner } from '@google-cloud/spanner';
import { SpannerCatalogReader } from '../../shared/adapters/spanner/catalog';
import { SpannerDimensionReader } from '../../shared/adapters/spanner/dimension-reader';
import { Enricher } from '../../shared/app/enrichment/enricher';
import type { Dialect, JsonValue } from '../../shared/domain/change-record';
import { lookupsSchema, resolveLookups } from '../../shared/domain/enrichment/lookups';
import { fromSecondsAndNanos, type Timestamp } from '../../shared/domain/timestamp';
import { dialectDatabases } from '../emulators/spanner/support/dialect-databases';

/** One key type: the column type per dialect, values to store (client form), and how each is asked for. */
interface KeyCase {
  name: string;
  type: Record<Dialect, string | undefined>;
  rows: Array<{ store: unknown; ask: JsonValue }>;
}

/** Values asked for in the very form they were stored in. */
const askedAsStored = (...values: string[]) => values.map((v) => ({ store: v, ask: v }));

const CASES: KeyCase[] = [
  {
    name: 'Date',
    type: { GOOGLE_STANDARD_SQL: 'DATE', POSTGRESQL: 'date' },
    rows: askedAsStored('0001-01-01', '9999-12-31', '2024-02-29'),
  },
  {
    name: 'Float',
    type: { GOOGLE_STANDARD_SQL: 'FLOAT64', POSTGRESQL: 'float8' },
    rows: [
      { store: Spanner.float(2), ask: 2 },
      { store: Spanner.float(-1.5), ask: '-1.5' },
      { store: Spanner.float(1.7976931348623157e308), ask: 1.7976931348623157e308 },
      ...askedAsStored('Infinity', '-Infinity'),
    ],
  },
  {
    name: 'Bytes',
    type: { GOOGLE_STANDARD_SQL: 'BYTES(MAX)', POSTGRESQL: 'bytea' },
    rows: [
      { store: Buffer.from([0, 1, 2, 255]), ask: 'AAEC/w==' },
      { store: Buffer.alloc(0), ask: '' },
      { store: Buffer.from('é', 'utf8'), ask: 'w6k=' },
    ],
  },
  {
    // PostgreSQL NUMERIC cannot be a key column (Spanner does not index PG.NUMERIC).
    name: 'Numeric',
    type: { GOOGLE_STANDARD_SQL: 'NUMERIC', POSTGRESQL: undefined },
    rows: [
      {
        store: Spanner.numeric('99999999999999999999999999999.999999999'),
        ask: '99999999999999999999999999999.999999999',
      },
      { store: Spanner.numeric('-0.000000001'), ask: '-0.000000001' },
      { store: Spanner.numeric('1.5'), ask: '1.500' },
    ],
  },
  {
    name: 'Uuid',
    type: { GOOGLE_STANDARD_SQL: 'UUID', POSTGRESQL: 'uuid' },
    rows: [{ store: 'f47ac10b-58cc-4372-a567-0e02b2c3d479', ask: 'F47AC10B-58CC-4372-A567-0E02B2C3D479' }],
  },
  {
    name: 'Ts',
    type: { GOOGLE_STANDARD_SQL: 'TIMESTAMP', POSTGRESQL: 'timestamptz' },
    rows: [
      ...askedAsStored(
        '1969-12-31T23:59:59.999999999Z',
        '2024-02-29T12:00:00.123456789Z',
        '2024-02-29T12:00:00.123456788Z',
      ),
      { store: '1970-01-01T00:00:00Z', ask: '1970-01-01T00:00:00.000000000Z' },
      ...askedAsStored('0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999999999Z'),
    ],
  },
  {
    name: 'Int',
    type: { GOOGLE_STANDARD_SQL: 'INT64', POSTGRESQL: 'bigint' },
    rows: askedAsStored('9223372036854775807', '-9223372036854775808', '9007199254740993'),
  },
];

const keyTables = (dialect: Dialect) =>
  CASES.filter((c) => c.type[dialect]).map((c) =>
    dialect === 'POSTGRESQL'
      ? `CREATE TABLE k${c.name.toLowerCase()} (k ${c.type[dialect]} NOT NULL PRIMARY KEY, v text)`
      : `CREATE TABLE K${c.name} (K ${c.type[dialect]} NOT NULL, V STRING(MAX)) PRIMARY KEY (K)`,
  );

const DDL: Record<Dialect, string[]> = {
  GOOGLE_STANDARD_SQL: [
    ...keyTables('GOOGLE_STANDARD_SQL'),
    'CREATE TABLE Dims (Id INT64 NOT NULL, Segment STRING(MAX)) PRIMARY KEY (Id)',
    'CREATE TABLE Facts (Id INT64 NOT NULL, DimId INT64) PRIMARY KEY (Id)',
  ],
  POSTGRESQL: [
    ...keyTables('POSTGRESQL'),
    'CREATE TABLE dims (id bigint NOT NULL PRIMARY KEY, segment text)',
    'CREATE TABLE facts (id bigint NOT NULL PRIMARY KEY, dimid bigint)',
  ],
};

const spanner = dialectDatabases(DDL);

describe.each<Dialect>(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'])(
  'Spanner dimension reader keys, %s',
  (dialect) => {
    const pg = dialect === 'POSTGRESQL';
    const n = (s: string) => (pg ? s.toLowerCase() : s);
    const setup = () => {
      const database = spanner.db(dialect).database;
      const catalog = new SpannerCatalogReader(database);
      return {
        database,
        catalog,
        reader: new SpannerDimensionReader(database, (t) => catalog.tableSchema(t)),
      };
    };
    const commitOf = (resp: { commitTimestamp?: { seconds?: unknown; nanos?: number | null } | null }) =>
      fromSecondsAndNanos(String(resp.commitTimestamp!.seconds), resp.commitTimestamp!.nanos ?? 0);

    it.each(CASES.filter((c) => c.type[dialect]).map((c) => [c.name, c] as const))(
      'finds %s keys from their wire form, NULL where missing',
      async (_name, c) => {
        const { database, reader } = setup();
        const table = n(`K${c.name}`);
        const [resp] = await database
          .table(table)
          .upsert(c.rows.map((r, i) => ({ [n('K')]: r.store, [n('V')]: `row ${i}` })));
        const at = commitOf(resp);
        const keys = c.rows.map((r) => [r.ask]);
        const missing = c.name === 'Bytes' ? 'AAAA' : c.name === 'Int' ? '404' : undefined;
        const asked = missing ? [...keys, [missing]] : keys;
        const read = await reader.read(table, asked, [n('V')], at);
        expect(read.rows.map((r) => r?.[n('V')] ?? null)).toEqual([
          ...c.rows.map((_r, i) => `row ${i}`),
          ...(missing ? [null] : []),
        ]);
        expect(read.types[n('V')]).toEqual({ code: 'STRING' });
        expect((await reader.read(table, keys, [n('V')], 'latest')).rows.every((r) => r !== null)).toBe(true);
      },
    );

    async function retype(): Promise<void> {
      const { database } = setup();
      const [op] = await database.updateSchema([
        pg
          ? 'ALTER TABLE dims ALTER COLUMN segment TYPE bytea'
          : 'ALTER TABLE Dims ALTER COLUMN Segment BYTES(MAX)',
      ]);
      await op.promise();
    }

    it('fails the next read of a dimension column retyped since the lookup was resolved, naming it', async () => {
      const { database, catalog, reader } = setup();
      const [fact, dim] = await Promise.all([
        catalog.tableSchema(n('Facts')),
        catalog.tableSchema(n('Dims')),
      ]);
      const resolve = (mode: string) => {
        const config = lookupsSchema.parse([
          { table: n('Dims'), key: { [n('Id')]: n('DimId') }, columns: [n('Segment')], mode },
        ]);
        const resolved = resolveLookups(fact, config, new Map([[dim.name, dim]]));
        if (!resolved.ok) throw new Error(resolved.problems.join('\n'));
        return resolved.lookups[0]!;
      };
      const write = async (id: string, segment: string): Promise<Timestamp> => {
        const [resp] = await database.table(n('Dims')).upsert([{ [n('Id')]: id, [n('Segment')]: segment }]);
        return commitOf(resp);
      };
      const asOf = new Enricher(resolve('as-of-commit'), { reader });
      const latest = new Enricher(resolve('latest'), { reader });
      const t1 = await write('1', 'gold');
      const row = (id: string, at: Timestamp) => ({ values: { [n('Id')]: '9', [n('DimId')]: id }, at });
      const target = `${n('dims')}_${n('Segment')}`;
      expect(await asOf.enrich([row('1', t1)])).toEqual([{ [target]: 'gold' }]);
      expect(await latest.enrich([row('1', t1)])).toEqual([{ [target]: 'gold' }]);
      await retype();
      const t2 = await write('2', 'c2lsdmVy');
      const named = new RegExp(
        `lookup ${n('Facts')}\\.lookups\\[0\\]: dimension table ${n('Dims')} column ${n('Segment')} changed type from STRING to BYTES`,
      );
      await expect(asOf.enrich([row('2', t2)])).rejects.toMatchObject({ kind: 'permanent', message: named });
      // A change read before the retype still reads the type of its own time.
      expect(await asOf.enrich([row('1', t1)])).toEqual([{ [target]: 'gold' }]);
      // latest: a cached row was read with the old type and is kept within its expiry; the next read fails.
      expect(await latest.enrich([row('1', t2)])).toEqual([{ [target]: 'gold' }]);
      await expect(latest.enrich([row('2', t2)])).rejects.toMatchObject({
        kind: 'permanent',
        message: named,
      });
    });
  },
);
