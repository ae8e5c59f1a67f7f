/**
 * Resolution of a fact table's lookups against the database's schemas, and what they add to its BigQuery
 * tables. Used by the table registry at every (re)plan and by the startup validation, so a bad lookup is a
 * permanent error naming the table, the lookup and the field, before any row is written.
 */
import type { BigQueryField } from '../../domain/bigquery-schema';
import {
  enrichedColumns,
  enrichedFields,
  type LookupConfig,
  lookupProblemsMessage,
  type ResolvedLookup,
  resolveLookups,
} from '../../domain/enrichment/lookups';
import { SluiceError } from '../../domain/errors';
import { TableNotFoundError, type TableSchema } from '../../domain/information-schema';
import type { ReplicaPlan } from '../../domain/replica-plan';
import type { Timestamp } from '../../domain/timestamp';
import type { SpannerCatalog } from '../../ports/spanner-catalog';

/** The schemas of the dimension tables `lookups` name (as of `at`); a table that does not exist is left out. */
export async function dimensionSchemas(
  catalog: Pick<SpannerCatalog, 'tableSchema'>,
  lookups: readonly LookupConfig[],
  at?: Timestamp,
): Promise<Map<string, TableSchema>> {
  const out = new Map<string, TableSchema>();
  for (const name of new Set(lookups.map((l) => l.table))) {
    try {
      out.set(name, await catalog.tableSchema(name, at === undefined ? {} : { at }));
    } catch (err) {
      if (!(err instanceof TableNotFoundError) && !/not found|no columns/i.test((err as Error).message ?? ''))
        throw err;
    }
  }
  return out;
}

/**
 * The dimension schemas to resolve against at `at`: each as of `at`, or as it is now when it did not exist
 * then or lacked a brought column. A plan at an old commit timestamp (a backlog, a retried partition, a start
 * in the past) of a lookup configured on a dimension table created (or given the column) later resolves
 * with the types of now; the rows of before it existed get NULLs, counted missing, at read (ADR-2123).
 */
async function schemasFor(
  catalog: Pick<SpannerCatalog, 'tableSchema'>,
  lookups: readonly LookupConfig[],
  at?: Timestamp,
): Promise<Map<string, TableSchema>> {
  const then = await dimensionSchemas(catalog, lookups, at);
  if (at === undefined) return then;
  const later = lookups.filter((l) => {
    const schema = then.get(l.table);
    return !schema || l.columns.some((c) => !schema.columns.some((x) => x.name === c));
  });
  if (later.length === 0) return then;
  for (const [name, schema] of await dimensionSchemas(catalog, later)) then.set(name, schema);
  return then;
}

/**
 * Resolves the lookups of `fact`. @throws SluiceError (`permanent`) listing every problem, each naming the
 * table, the lookup (`tables.<T>.lookups[<i>]`) and the field.
 */
export async function resolveTableLookups(
  catalog: Pick<SpannerCatalog, 'tableSchema'>,
  fact: TableSchema,
  lookups: readonly LookupConfig[],
  at?: Timestamp,
): Promise<ResolvedLookup[]> {
  if (lookups.length === 0) return [];
  const resolved = resolveLookups(fact, [...lookups], await schemasFor(catalog, lookups, at));
  if (!resolved.ok) throw new SluiceError('permanent', lookupProblemsMessage(fact.name, resolved.problems));
  return resolved.lookups;
}

/**
 * The replica's source schema and watched columns with the enriched columns appended (so the replica
 * sinks create them as they create source columns), and the history table's enriched fields.
 */
export function withEnrichedColumns(
  plan: ReplicaPlan,
  lookups: readonly ResolvedLookup[],
): { schema: TableSchema; watched: 'all' | string[]; fields: BigQueryField[] } {
  if (lookups.length === 0) return { schema: plan.schema, watched: plan.watched, fields: [] };
  const last = Math.max(0, ...plan.schema.columns.map((c) => c.ordinalPosition));
  const extra = enrichedColumns(lookups, last);
  return {
    schema: { ...plan.schema, columns: [...plan.schema.columns, ...extra] },
    watched: plan.watched === 'all' ? 'all' : [...plan.watched, ...extra.map((c) => c.name)],
    fields: enrichedFields(lookups),
  };
}
