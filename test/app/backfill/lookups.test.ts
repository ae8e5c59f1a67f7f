/**
 * Lookups in a backfill: resolved at the snapshot timestamp and applied to the snapshot's rows by the wire
 * form of their join columns, for every key type (the writer form of most would miss every row); a join
 * column the backfill does not read is refused naming it, and a row without its key values fails loudly.
 */
import { MemoryDimensionReader } from '../../../shared/adapters/memory/dimension-reader';
import { backfillLookups, enrichSnapshotRows } from '../../../shared/app/backfill/lookups';
import { Enrichments } from '../../../shared/app/enrichment/apply';
import { parseConfigObject } from '../../../shared/domain/config';
import { TableNotFoundError, type TableSchema } from '../../../shared/domain/information-schema';
import { fromNanos } from '../../../shared/domain/timestamp';
import { KEY_VALUES, type SnapshotRow } from '../../../shared/ports/snapshot-source';
import { schemaColumn } from '../support/catalog';

const col = schemaColumn;
const ORDERS: TableSchema = {
  name: 'Orders',
  primaryKey: ['OrderId'],
  columns: [col('OrderId', 'INT64', 1), col('CustId', 'INT64', 2), col('PlacedAt', 'TIMESTAMP', 3)],
};
/** A fact and a dimension joined on one column of `type` (a PG NUMERIC carries its annotation). */
const pair = (type: { code: string; typeAnnotation?: string }): [TableSchema, TableSchema] => [
  {
    name: 'Facts',
    primaryKey: ['Id'],
    columns: [col('Id', 'INT64', 1), { name: 'Ref', type, nullable: true, ordinalPosition: 2 }],
  },
  {
    name: 'Dim',
    primaryKey: ['K'],
    columns: [{ name: 'K', type, nullable: false, ordinalPosition: 1 }, col('Label', 'STRING', 2)],
  },
];
const CUSTOMERS: TableSchema = {
  name: 'Customers',
  primaryKey: ['CustomerId'],
  columns: [col('CustomerId', 'INT64', 1), col('Name', 'STRING', 2)],
};
const SLOTS: TableSchema = {
  name: 'Slots',
  primaryKey: ['Cust', 'Day'],
  columns: [col('Day', 'TIMESTAMP', 1), col('Cust', 'INT64', 2), col('Label', 'STRING', 3)],
};
const DAYS: TableSchema = {
  name: 'Days',
  primaryKey: ['At'],
  columns: [col('At', 'TIMESTAMP', 1), col('Label', 'STRING', 2)],
};
const catalog = {
  async tableSchema(table: string) {
    const s = [ORDERS, CUSTOMERS, DAYS, SLOTS].find((x) => x.name === table);
    if (!s) throw new TableNotFoundError(table);
    return s;
  },
};
const configWith = (lookups: unknown[]) =>
  parseConfigObject({
    project: 'test-project',
    spanner: { instance: 'inst', database: 'db', stream: 'Changes' },
    bigquery: { dataset: 'ds' },
    ledger: { bucket: 'bucket' },
    tables: { Orders: { replica: 'orders', lookups } },
  });
const at = fromNanos(1_700_000_000_000_000_000n);

describe('backfill lookups', () => {
  it('enriches snapshot rows at the snapshot timestamp', async () => {
    const config = configWith([{ table: 'Customers', key: { CustomerId: 'CustId' }, columns: ['Name'] }]);
    const lookups = await backfillLookups({ catalog: catalog as never, config }, ORDERS, at);
    const dimensions = new MemoryDimensionReader();
    dimensions.write('Customers', ['7'], fromNanos(1n), { CustomerId: '7', Name: 'Ann' });
    dimensions.write('Customers', ['7'], fromNanos(at + 1n), { CustomerId: '7', Name: 'Later' });
    const enrichments = Enrichments.over({
      dimensions,
      catalog: { readRowsAt: async () => ({ columns: [], rows: [] }) },
    });
    const rows: SnapshotRow[] = [
      { OrderId: '1', CustId: '7', [KEY_VALUES]: { CustId: '7' } },
      { OrderId: '2', CustId: '8', [KEY_VALUES]: { CustId: '8' } },
    ];
    expect(await enrichSnapshotRows({ enrichments }, 'Orders', lookups, rows, at)).toEqual([
      { customers_Name: 'Ann' },
      { customers_Name: null },
    ]);
    expect(enrichments.stats()['Orders.lookups[0]']).toMatchObject({ missing: 1 });
  });

  it.each([
    // [type, writer form of the fact value, its wire form]
    ['DATE', { code: 'DATE' }, 19_782, '2024-02-29'],
    ['FLOAT64', { code: 'FLOAT64' }, 2, 2],
    ['BYTES', { code: 'BYTES' }, 'AAEC/w==', 'AAEC/w=='],
    [
      'NUMERIC',
      { code: 'NUMERIC' },
      '99999999999999999999999999999.999999999',
      '99999999999999999999999999999.999999999',
    ],
    ['PG NUMERIC', { code: 'NUMERIC', typeAnnotation: 'PG_NUMERIC' }, null, 'NaN'],
    [
      'UUID',
      { code: 'UUID' },
      'f47ac10b-58cc-4372-a567-0e02b2c3d479',
      'f47ac10b-58cc-4372-a567-0e02b2c3d479',
    ],
    ['TIMESTAMP', { code: 'TIMESTAMP' }, '1709208000123456', '2024-02-29T12:00:00.123456789Z'],
    ['INT64 past 2^53', { code: 'INT64' }, '9007199254740993', '9007199254740993'],
  ])('looks up a %s key by its wire form, not its writer form', async (_label, type, writer, wire) => {
    const [facts, dim] = pair(type);
    const config = parseConfigObject({
      project: 'test-project',
      spanner: { instance: 'inst', database: 'db', stream: 'Changes' },
      bigquery: { dataset: 'ds' },
      ledger: { bucket: 'bucket' },
      tables: {
        Facts: { replica: 'facts', lookups: [{ table: 'Dim', key: { K: 'Ref' }, columns: ['Label'] }] },
      },
    });
    const schemas = {
      async tableSchema(t: string) {
        return t === 'Facts' ? facts : dim;
      },
    };
    const lookups = await backfillLookups({ catalog: schemas as never, config }, facts, at, ['Id', 'Ref']);
    const dimensions = new MemoryDimensionReader();
    dimensions.write('Dim', [wire], fromNanos(1n), { K: wire, Label: 'found' });
    const enrichments = Enrichments.over({
      dimensions,
      catalog: { readRowsAt: async () => ({ columns: [], rows: [] }) },
    });
    const row: SnapshotRow = { Id: '1', Ref: writer };
    row[KEY_VALUES] = { Ref: wire };
    expect(await enrichSnapshotRows({ enrichments }, 'Facts', lookups, [row], at)).toEqual([
      { dim_Label: 'found' },
    ]);
  });

  it('joins a composite key given in another order than declared, in declared order', async () => {
    const config = configWith([
      { table: 'Slots', key: { Day: 'PlacedAt', Cust: 'CustId' }, columns: ['Label'] },
    ]);
    const lookups = await backfillLookups({ catalog: catalog as never, config }, ORDERS, at);
    expect(lookups[0]?.key.map((k) => k.dimensionColumn)).toEqual(['Cust', 'Day']);
    const dimensions = new MemoryDimensionReader();
    dimensions.write('Slots', ['7', '2024-02-29T12:00:00.123456789Z'], fromNanos(1n), { Label: 'noon' });
    const enrichments = Enrichments.over({
      dimensions,
      catalog: { readRowsAt: async () => ({ columns: [], rows: [] }) },
    });
    const row: SnapshotRow = { OrderId: '1', CustId: '7', PlacedAt: '1709208000123456' };
    row[KEY_VALUES] = { PlacedAt: '2024-02-29T12:00:00.123456789Z', CustId: '7' };
    expect(await enrichSnapshotRows({ enrichments }, 'Orders', lookups, [row], at)).toEqual([
      { slots_Label: 'noon' },
    ]);
  });

  it('refuses a join column the backfill does not read, and a row without key values, naming them', async () => {
    const config = configWith([{ table: 'Days', key: { At: 'PlacedAt' }, columns: ['Label'] }]);
    await expect(
      backfillLookups({ catalog: catalog as never, config }, ORDERS, at, ['OrderId', 'CustId']),
    ).rejects.toThrow(
      /tables\.Orders\.lookups\[0\]\.key\.At: Orders\.PlacedAt is not among the columns a backfill reads/,
    );
    const lookups = await backfillLookups({ catalog: catalog as never, config }, ORDERS, at);
    const enrichments = Enrichments.over({
      dimensions: new MemoryDimensionReader(),
      catalog: { readRowsAt: async () => ({ columns: [], rows: [] }) },
    });
    await expect(
      enrichSnapshotRows({ enrichments }, 'Orders', lookups, [{ OrderId: '1', PlacedAt: '1' }], at),
    ).rejects.toMatchObject({
      kind: 'permanent',
      message: 'table Orders: snapshot row 0 of the batch carries no key values for its lookups',
    });
  });
});
