/** The all-tables form of SLUICE_TABLES: naming rule, explicit entries winning, exclusions, JSON round trip. */
import {
  applyTemplate,
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
    expect(destinationPart('sales.Order-Lines')).toBe('sales_order_lines');
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
});
