/**
 * Lookups in a backfill: resolved at the snapshot timestamp and applied to the snapshot's rows; a lookup
 * keyed on a type a snapshot row cannot match is refused naming it, never looked up with a key that misses.
 */
import { MemoryDimensionReader } from '../../../shared/adapters/memory/dimension-reader';
import { backfillLookups, enrichSnapshotRows } from '../../../shared/app/backfill/lookups';
import { Enrichments } from '../../../shared/app/enrichment/apply';
import { parseConfigObject } from '../../../shared/domain/config';
import { TableNotFoundError, type TableSchema } from '../../../shared/domain/information-schema';
import { fromNanos } from '../../../shared/domain/timestamp';

const col = (name: string, code: string, n: number) => ({
  name,
  type: { code },
  nullable: true,
  ordinalPosition: n,
});
const ORDERS: TableSchema = {
  name: 'Orders',
  primaryKey: ['OrderId'],
  columns: [col('OrderId', 'INT64', 1), col('CustId', 'INT64', 2), col('PlacedAt', 'TIMESTAMP', 3)],
};
const CUSTOMERS: TableSchema = {
  name: 'Customers',
  primaryKey: ['CustomerId'],
  columns: [col('CustomerId', 'INT64', 1), col('Name', 'STRING', 2)],
};
const DAYS: TableSchema = {
  name: 'Days',
  primaryKey: ['At'],
  columns: [col('At', 'TIMESTAMP', 1), col('Label', 'STRING', 2)],
};
const catalog = {
  async tableSchema(table: string) {
    const s = [ORDERS, CUSTOMERS, DAYS].find((x) => x.name === table);
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
    const rows = [
      { OrderId: '1', CustId: '7' },
      { OrderId: '2', CustId: '8' },
    ];
    expect(await enrichSnapshotRows({ enrichments }, 'Orders', lookups, rows, at)).toEqual([
      { customers_Name: 'Ann' },
      { customers_Name: null },
    ]);
    expect(enrichments.stats()['Orders.lookups[0]']).toMatchObject({ missing: 1 });
  });

  it('refuses a lookup keyed on a TIMESTAMP column, naming lookup and column', async () => {
    const config = configWith([{ table: 'Days', key: { At: 'PlacedAt' }, columns: ['Label'] }]);
    await expect(backfillLookups({ catalog: catalog as never, config }, ORDERS, at)).rejects.toThrow(
      /tables\.Orders\.lookups\[0\]\.key\.At: a backfill can look up INT64, STRING and BOOL keys only; Orders\.PlacedAt is TIMESTAMP/,
    );
  });
});
