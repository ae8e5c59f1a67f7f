/**
 * Mutation counts as the service's per-commit limit counts them: an insert or update counts one per column
 * it writes plus one per secondary index containing that column (index key or STORING); a delete counts one
 * per key or range plus one per secondary index of the table. The emulator applies the same count to a
 * commit and to a whole BatchWrite request, where a request over the limit is rejected before any group is
 * applied (a request-level rejection, the failure a writer's batch limits exist to avoid).
 */
import type { Schema, Table } from './schema';
import type { MutationJson } from './writes';

/** Secondary indexes containing each column of a table (lower-cased name → count). */
function indexCounts(schema: Schema, table: Table): Map<string, number> {
  const counts = new Map<string, number>();
  for (const idx of schema.indexesOf(table.name))
    for (const col of new Set([...idx.keys.map((k) => k.name), ...idx.storing].map((c) => c.toLowerCase())))
      counts.set(col, (counts.get(col) ?? 0) + 1);
  return counts;
}

/** The count of one mutation; an unknown table counts as its columns (the apply step rejects it). */
export function mutationCount(schema: Schema, m: MutationJson): number {
  if (m.delete) {
    const table = schema.find(m.delete.table);
    const indexes = table ? schema.indexesOf(table.name).length : 0;
    const ks = m.delete.keySet ?? {};
    const parts = ks.all ? 1 : (ks.keys?.length ?? 0) + (ks.ranges?.length ?? 0);
    return parts * (1 + indexes);
  }
  const w = m.insert ?? m.update ?? m.insertOrUpdate ?? m.replace;
  if (!w) return 0;
  const table = schema.find(w.table);
  const counts = table ? indexCounts(schema, table) : new Map<string, number>();
  const perRow = (w.columns ?? []).reduce((n, c) => n + 1 + (counts.get(c.toLowerCase()) ?? 0), 0);
  return perRow * (w.values?.length ?? 0);
}

/** The count of a list of mutations. */
export function mutationsCount(schema: Schema, mutations: MutationJson[]): number {
  return mutations.reduce((n, m) => n + mutationCount(schema, m), 0);
}
