/** Lookup configuration: parsed with defaults, refused with named problems, resolved in declared key order. */

import { lookupsSchema, resolveLookups } from '../../../../shared/domain/enrichment/lookups';
import { ordersCustomersLookup } from '../support/orders-lookup';
import { tableOf } from '../support/table-schemas';

const orders = tableOf(
  'Orders',
  ['OrderId'],
  [
    ['OrderId', 'INT64'],
    ['Region', 'STRING', 'NOT NULL'],
    ['CustId', 'INT64'],
    ['customers_Name', 'STRING'],
  ],
);

const customers = tableOf(
  'Customers',
  ['Region', 'CustomerId'],
  [
    ['CustomerId', 'INT64'],
    ['Region', 'STRING'],
    ['Name', 'STRING'],
    ['Segment', 'STRING'],
  ],
);

const schemas = new Map([
  ['Orders', orders],
  ['Customers', customers],
]);

const parse = (v: unknown) => lookupsSchema.parse(v);
const good = {
  table: 'Customers',
  key: { CustomerId: 'CustId', Region: 'Region' },
  columns: ['Segment'],
  prefix: 'c_',
};

describe('lookups', () => {
  it('resolves keys in the declared primary-key order whatever order the mapping names them in', () => {
    const r = resolveLookups(orders, parse([good]), schemas);
    expect(r).toEqual({
      ok: true,
      lookups: [ordersCustomersLookup(['Segment'], 'as-of-commit')],
    });
  });

  it('gives latest lookups the partial cache defaults', () => {
    const r = resolveLookups(orders, parse([{ ...good, mode: 'latest' }]), schemas);
    expect(r.ok && r.lookups[0]?.cache).toEqual({
      maxSize: 10_000,
      expireAfterWriteMs: 60_000,
      cacheMissing: false,
    });
  });

  it.each([
    [{ ...good, table: 'Nope' }, 'tables.Orders.lookups[0].table: dimension table Nope does not exist'],
    [
      { ...good, key: { CustomerId: 'CustId' } },
      'tables.Orders.lookups[0].key: does not map primary-key column Region of Customers (key: Region, CustomerId)',
    ],
    [
      { ...good, key: { CustomerId: 'CustId', Region: 'Region', Name: 'Region' } },
      'tables.Orders.lookups[0].key.Name: is not a primary-key column of Customers (key: Region, CustomerId)',
    ],
    [
      { ...good, key: { CustomerId: 'Missing', Region: 'Region' } },
      'tables.Orders.lookups[0].key.CustomerId: Orders has no column Missing',
    ],
    [
      { ...good, key: { CustomerId: 'Region', Region: 'Region' } },
      'tables.Orders.lookups[0].key.CustomerId: Orders.Region is STRING but Customers.CustomerId is INT64',
    ],
    [
      { ...good, columns: ['Segment', 'Tier'] },
      'tables.Orders.lookups[0].columns[1]: Customers has no column Tier',
    ],
    [
      { ...good, prefix: undefined, columns: ['Name'] },
      'tables.Orders.lookups[0].columns[0]: customers_Name collides with Orders.customers_Name; choose another prefix',
    ],
  ])('refuses %j naming the problem', (lookup, problem) => {
    const r = resolveLookups(orders, parse([lookup]), schemas);
    expect(r).toEqual({ ok: false, problems: [problem] });
  });

  it('refuses a full-table cache and a cache on an as-of-commit lookup', () => {
    const full = lookupsSchema.safeParse([{ ...good, mode: 'latest', cache: 'full' }]);
    expect(full.success).toBe(false);
    expect(JSON.stringify(full.error?.issues)).toMatch(/full-table cache is not supported/);
    const asOf = lookupsSchema.safeParse([{ ...good, cache: { maxSize: 10 } }]);
    expect(asOf.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      ['0.cache', 'only a latest lookup has a cache: as-of-commit reads each row at its commit timestamp'],
    ]);
  });

  it('two lookups may not bring the same column name', () => {
    const r = resolveLookups(orders, parse([good, good]), schemas);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.problems[0]).toMatch(
      /lookups\[1\]\.columns\[0\]: c_Segment collides with tables\.Orders\.lookups\[0\]/,
    );
  });
});
