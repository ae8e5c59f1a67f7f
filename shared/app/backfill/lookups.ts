/**
 * Lookups in a backfill: the snapshot's rows are enriched at the snapshot timestamp, as the reader enriches a
 * change at its commit timestamp, so backfilled rows carry the dimension as of the snapshot. A snapshot row
 * holds the values BigQuery is written (writer form), which equal the key form of a point read for INT64,
 * STRING and BOOL key columns; a lookup keyed on another type is refused when the backfill is requested,
 * naming it, rather than looked up with a key that could never match.
 */
import type { JsonValue } from '../../domain/change-record';
import type { ResolvedLookup } from '../../domain/enrichment/lookups';
import { SluiceError } from '../../domain/errors';
import type { TableSchema } from '../../domain/information-schema';
import type { Timestamp } from '../../domain/timestamp';
import type { WriterValue } from '../../domain/value-mapping';
import { resolveTableLookups } from '../enrichment/resolve';
import type { BackfillDeps } from './deps';

const KEY_TYPES = new Set(['INT64', 'STRING', 'BOOL']);

/**
 * The resolved lookups of a backfilled table. @throws SluiceError (`permanent`) naming table, lookup and
 * field when one cannot resolve or is keyed on a type a backfill cannot look up yet.
 */
export async function backfillLookups(
  deps: Pick<BackfillDeps, 'catalog' | 'config'>,
  schema: TableSchema,
  at?: Timestamp,
): Promise<ResolvedLookup[]> {
  const lookups = await resolveTableLookups(
    deps.catalog,
    schema,
    deps.config.tables[schema.name]?.lookups ?? [],
    at,
  );
  const problems: string[] = [];
  for (const l of lookups)
    for (const k of l.key) {
      const code = schema.columns.find((c) => c.name === k.factColumn)?.type.code;
      if (!code || !KEY_TYPES.has(code))
        problems.push(
          `tables.${l.id}.key.${k.dimensionColumn}: a backfill can look up INT64, STRING and BOOL keys only; ${schema.name}.${k.factColumn} is ${code}`,
        );
    }
  if (problems.length > 0)
    throw new SluiceError(
      'permanent',
      `the lookups of table ${schema.name} cannot be applied by a backfill:\n  - ${problems.join('\n  - ')}`,
    );
  return lookups;
}

/** The enriched columns of each snapshot row at `at`, in row order (empty objects without lookups). */
export async function enrichSnapshotRows(
  deps: Pick<BackfillDeps, 'enrichments'>,
  table: string,
  lookups: readonly ResolvedLookup[],
  rows: ReadonlyArray<Record<string, WriterValue>>,
  at: Timestamp,
): Promise<Array<Record<string, WriterValue>>> {
  if (lookups.length === 0) return rows.map(() => ({}));
  if (!deps.enrichments)
    throw new SluiceError(
      'permanent',
      `table ${table} has lookups but the backfill function cannot apply them`,
    );
  return deps.enrichments.forRows(lookups, rows as ReadonlyArray<Record<string, JsonValue>>, at);
}
