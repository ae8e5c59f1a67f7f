/** The resolved lookup the enrichment tests share: Orders' first lookup, into Customers. */
import type { ResolvedLookup } from '../../../../shared/domain/enrichment/lookups';

/**
 * `Orders.lookups[0]`: the Customers row keyed (Region, CustomerId), in that primary-key order, from the
 * fact's Region and CustId, bringing the given STRING columns as `c_<column>`.
 */
export function ordersCustomersLookup(
  columns: string[],
  mode: ResolvedLookup['mode'] = 'as-of-commit',
  cache: ResolvedLookup['cache'] = undefined,
): ResolvedLookup {
  return {
    id: 'Orders.lookups[0]',
    factTable: 'Orders',
    dimension: 'Customers',
    key: [
      { dimensionColumn: 'Region', factColumn: 'Region' },
      { dimensionColumn: 'CustomerId', factColumn: 'CustId' },
    ],
    columns: columns.map((source) => ({
      source,
      target: `c_${source}`,
      type: 'STRING',
      spannerType: { code: 'STRING' },
    })),
    mode,
    cache,
  };
}
