/**
 * Lookups in a backfill: the snapshot's rows are enriched at the snapshot timestamp, as the reader enriches a
 * change at its commit timestamp, so backfilled rows carry the dimension as of the snapshot. A snapshot row
 * holds the values BigQuery is written (writer form), which for most key types are not the key of a point
 * read (a TIMESTAMP as microseconds, a DATE as days); so the snapshot read also carries the Spanner wire
 * form of the lookups' join columns (`KEY_VALUES`), and those are the keys looked up — exact for every type.
 */
import type { ResolvedLookup } from '../../domain/enrichment/lookups';
import { SluiceError } from '../../domain/errors';
import type { TableSchema } from '../../domain/information-schema';
import type { Timestamp } from '../../domain/timestamp';
import type { WriterValue } from '../../domain/value-mapping';
import { KEY_VALUES, type SnapshotRow } from '../../ports/snapshot-source';
import { resolveTableLookups } from '../tables';
import type { BackfillDeps } from './deps';

/** The fact columns a table's lookups join on, each once: the columns a snapshot read carries in wire form. */
export function lookupKeyColumns(lookups: readonly ResolvedLookup[]): string[] {
  return [...new Set(lookups.flatMap((l) => l.key.map((k) => k.factColumn)))];
}

/**
 * The resolved lookups of a backfilled table. @throws SluiceError (`permanent`) naming table, lookup and
 * field when one cannot resolve, or joins on a column the backfill does not read (`columns`, its projection).
 */
export async function backfillLookups(
  deps: Pick<BackfillDeps, 'catalog' | 'config'>,
  schema: TableSchema,
  at?: Timestamp,
  columns?: readonly string[],
): Promise<ResolvedLookup[]> {
  const lookups = await resolveTableLookups(
    deps.catalog,
    schema,
    deps.config.tables[schema.name]?.lookups ?? [],
    at,
  );
  const problems: string[] = [];
  for (const l of lookups)
    for (const k of l.key)
      if (columns && !columns.includes(k.factColumn))
        problems.push(
          `tables.${l.id}.key.${k.dimensionColumn}: ${schema.name}.${k.factColumn} is not among the columns a backfill reads (the change stream does not watch it): add it to the change stream, or join on a watched column`,
        );
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
  rows: readonly SnapshotRow[],
  at: Timestamp,
): Promise<Array<Record<string, WriterValue>>> {
  if (lookups.length === 0) return rows.map(() => ({}));
  if (!deps.enrichments)
    throw new SluiceError(
      'permanent',
      `table ${table} has lookups but the backfill function cannot apply them`,
    );
  const keys = rows.map((row, i) => {
    const values = row[KEY_VALUES];
    // Never the writer values instead: for most key types they would miss every row, silently.
    if (!values)
      throw new SluiceError(
        'permanent',
        `table ${table}: snapshot row ${i} of the batch carries no key values for its lookups`,
      );
    return values;
  });
  return deps.enrichments.forRows(lookups, keys, at);
}
