/** The all-tables form of SLUICE_TABLES: naming rule, explicit entries winning, exclusions, JSON round trip. */
import {
  applyTemplate,
  destinationPart,
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
});
