/** The all-tables form of SLUICE_TABLES: naming rule, explicit entries winning, exclusions, JSON round trip. */
import {
  applyTemplate,
  destinationClashes,
  destinationClashesOf,
  destinationPart,
  historySources,
  notReplicatedReason,
  tableRulesJson,
  tableRulesSchema,
  targetsFor,
} from '../../../shared/domain/table-rules';

const rules = tableRulesSchema.parse({
  '*': { replica: true, history: true },
  Orders: { replica: 'orders_v2' },
  Secrets: false,
});

describe('table rules', () => {
  it('names destinations by the rule: lower case, BigQuery-safe, with the default templates', () => {
    expect(destinationPart('CustomerOrders')).toBe('customerorders');
    expect(destinationPart('sales.Order-Lines')).toBe('sales__order_lines');
    expect(destinationPart('sales.Orders')).toBe('sales__orders');
    expect(applyTemplate('raw_{table}_v1', 'Items')).toBe('raw_items_v1');
    expect(targetsFor(rules, 'Customers')).toEqual({ replica: 'customers', history: 'customers_history' });
  });

  it('lets an explicit entry win over the rule, and an exclusion leave a table out', () => {
    expect(targetsFor(rules, 'Orders')).toEqual({ replica: 'orders_v2' });
    expect(targetsFor(rules, 'Secrets')).toBeUndefined();
    expect(notReplicatedReason(rules, 'Secrets')).toMatch(/excluded in SLUICE_TABLES/);
    expect(notReplicatedReason(rules, 'Customers')).toBeUndefined();
  });

  it('replicates only the listed tables without the rule, and says how to add one', () => {
    const explicit = tableRulesSchema.parse({ Orders: { history: 'h' } });
    expect(targetsFor(explicit, 'Orders')).toEqual({ history: 'h' });
    expect(targetsFor(explicit, 'NewTable')).toBeUndefined();
    expect(notReplicatedReason(explicit, 'NewTable')).toMatch(/not in SLUICE_TABLES .*"\*"/);
  });

  it('round-trips through its JSON form', () => {
    expect(tableRulesSchema.parse(tableRulesJson(rules))).toEqual(rules);
  });

  it("keeps an entry's lookups through its JSON form (the deployment writes SLUICE_TABLES from it)", () => {
    const lookups = [
      { table: 'Customers', key: { CustomerId: 'CustId' }, columns: ['Name'] },
      {
        table: 'Regions',
        key: { Code: 'Region' },
        columns: ['Label'],
        mode: 'latest',
        cache: { maxSize: 5 },
      },
    ];
    const withLookups = tableRulesSchema.parse({ Orders: { history: 'h', lookups } });
    expect(withLookups.tables.Orders?.lookups?.[0]?.mode).toBe('as-of-commit');
    expect(withLookups.tables.Orders?.lookups?.[1]?.cache).toEqual({
      maxSize: 5,
      expireAfterWriteMs: 60_000,
      cacheMissing: false,
    });
    expect(tableRulesSchema.parse(JSON.parse(JSON.stringify(tableRulesJson(withLookups))))).toEqual(
      withLookups,
    );
  });

  it('names the source tables feeding a history table: same text exactly when the same tables feed it', () => {
    const explicit = tableRulesSchema.parse({
      Orders: { history: 'h' },
      Items: { history: 'h' },
      X: { replica: 'x' },
    });
    expect(historySources(explicit, 'h')).toBe('Items,Orders');
    expect(historySources(explicit, 'other')).toBe('');
    expect(historySources(rules, 'customers_history')).toBe('*={table}_history');
    // Orders has an explicit entry without history: the rule would have sent it to orders_history.
    expect(historySources(rules, 'orders_history')).toBe('*={table}_history,-Orders');
    expect(historySources(rules, 'secrets_history')).toBe('*={table}_history,-Secrets');
    expect(historySources(rules, 'orders_v2')).toBe('');
    const shared = tableRulesSchema.parse({ '*': { history: true }, Legacy: { history: 'orders_history' } });
    expect(historySources(shared, 'orders_history')).toBe('Legacy,*={table}_history');
    // Editing which tables feed it changes the text; editing what feeds other tables does not.
    const edited = tableRulesSchema.parse({ Orders: { history: 'h' }, X: { replica: 'x', history: 'y' } });
    expect(historySources(edited, 'h')).not.toBe(historySources(explicit, 'h'));
    const unrelated = tableRulesSchema.parse({ Orders: { history: 'h' }, Items: { history: 'h' }, X: false });
    expect(historySources(unrelated, 'h')).toBe(historySources(explicit, 'h'));
  });

  it('refuses two source tables sent to one replica table, naming both and the fix', () => {
    const all = tableRulesSchema.parse({ '*': { replica: true, history: true } });
    expect(targetsFor(all, 'sales.Orders')).toEqual({
      replica: 'sales__orders',
      history: 'sales__orders_history',
    });
    // A plain table and a named-schema table of the same base name do not meet.
    expect(destinationClashes(all, ['Orders', 'sales.Orders'])).toEqual([]);
    expect(destinationClashes(all, ['sales.Orders', 'sales__orders', 'Items'])).toEqual([
      'tables sales.Orders and sales__orders would both write the replica table sales__orders: give one of them an explicit entry with another name in SLUICE_TABLES, or exclude it ("sales.Orders": false)',
      'tables sales.Orders and sales__orders would both write the history table sales__orders_history: give one of them an explicit entry with another name in SLUICE_TABLES, or exclude it ("sales.Orders": false)',
    ]);
    expect(destinationClashesOf(all, 'Items', ['sales.Orders', 'sales__orders'])).toEqual([]);
    expect(destinationClashesOf(all, 'sales__orders', ['sales.Orders'])).toHaveLength(2);
    // An explicit entry resolves it; explicit entries may share a history table on purpose.
    const fixed = tableRulesSchema.parse({
      '*': { replica: true },
      'sales.Orders': { replica: 'sales_orders_eu', history: 'h' },
      Legacy: { history: 'h' },
    });
    expect(destinationClashes(fixed, ['sales.Orders', 'sales__orders', 'Legacy'])).toEqual([]);
    const twice = tableRulesSchema.parse({ A: { replica: 'same' }, B: { replica: 'same' } });
    expect(destinationClashes(twice, [])).toEqual([
      'tables A and B would both write the replica table same: give one of them an explicit entry with another name in SLUICE_TABLES, or exclude it ("A": false)',
    ]);
  });
});
