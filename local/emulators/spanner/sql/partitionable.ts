/**
 * Which queries PartitionQuery accepts: a single SELECT over one user table, with no ORDER BY, LIMIT,
 * DISTINCT, GROUP BY, aggregate or set operation at the root (the service needs a distributed union there).
 */
import type { SpannerTypeJson, WireValue } from '../hooks';
import type { Dialect } from '../tokenizer';
import type { Expr, Query } from './ast';
import { compileStatement } from './compile';
import { Cursor } from './cursor';
import { FUNCTIONS } from './function-table';
import { parseQuery } from './parse-query';
import type { Catalog } from './scope';

const AGGREGATES = new Set([
  'COUNT',
  'ARRAY_AGG',
  'STRING_AGG',
  ...Object.keys(FUNCTIONS).filter((n) => FUNCTIONS[n]?.some((s) => s.agg)),
]);

/** True when an expression calls an aggregate outside any subquery. */
function hasAggregate(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(hasAggregate);
  if (typeof node !== 'object' || node === null) return false;
  const k = (node as { k?: string }).k;
  if (k === 'query') return false;
  if (k === 'call' && AGGREGATES.has((node as Expr & { k: 'call' }).name.toUpperCase())) return true;
  return Object.values(node).some(hasAggregate);
}

function rootShaped(q: Query): boolean {
  if (q.with.length || q.orderBy.length || q.limit || q.offset || q.body.k !== 'select') return false;
  const s = q.body;
  if (s.distinct || s.groupBy.length || s.having || s.as || s.from?.k !== 'table') return false;
  return !s.items.some((i) => i.k === 'item' && hasAggregate(i.e));
}

/** The user table a root-partitionable query reads, or undefined; the query must compile. */
export function rootPartitionTable(
  sql: string,
  dialect: Dialect,
  catalog: Catalog,
  values: Record<string, WireValue>,
  types: Record<string, SpannerTypeJson>,
): string | undefined {
  const compiled = compileStatement(sql, dialect, catalog, values, types);
  const q = parseQuery(new Cursor(sql.trim().replace(/;\s*$/, ''), dialect));
  if (!rootShaped(q) || compiled.tables.size !== 1) return undefined;
  return [...compiled.tables][0];
}
