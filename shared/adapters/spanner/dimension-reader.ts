/**
 * {@link DimensionReader} over Spanner: one read of a key set per call, single-use, at exactly the commit
 * timestamp (or strong for `latest`). Spanner returns the rows that exist, in key order; each is matched back
 * to its requested key by the key columns in the change stream's wire form, so any key type matches.
 */
import type { Database } from '@google-cloud/spanner';
import { clientRowToWriterRow, clientValueToModJson } from '../../domain/client-row';
import { structFields } from '../../domain/client-values';
import { SluiceError } from '../../domain/errors';
import type { TableSchema } from '../../domain/information-schema';
import type { Timestamp } from '../../domain/timestamp';
import type { ValueIssue, WriterValue } from '../../domain/value-mapping';
import type { DimensionReader, KeyValues } from '../../ports/dimension-reader';
import { preciseDateOf } from './request-options';

/** Reads dimension rows; `schemaOf` gives a table's schema (the catalog's, cached there). */
export class SpannerDimensionReader implements DimensionReader {
  constructor(
    private readonly database: Database,
    private readonly schemaOf: (table: string) => Promise<TableSchema>,
    private readonly onValueIssues?: (table: string, issues: ValueIssue[]) => void,
  ) {}

  async read(
    table: string,
    keys: KeyValues[],
    columns: string[],
    at: Timestamp | 'latest',
  ): Promise<Array<Record<string, WriterValue> | null>> {
    if (keys.length === 0) return [];
    const schema = await this.schemaOf(table);
    // A brought column the dimension no longer has (dropped since the lookup was resolved) is an error
    // naming it: selecting only the columns that exist would give every row a silent NULL.
    const gone = columns.filter((c) => !schema.columns.some((x) => x.name === c));
    if (gone.length > 0)
      throw new SluiceError(
        'permanent',
        `dimension table ${table} has no column ${gone.join(', ')} (a lookup brings it): restore the column or change the lookup in SLUICE_TABLES, then retry the partition`,
      );
    const selected = schema.columns.filter(
      (c) => columns.includes(c.name) || schema.primaryKey.includes(c.name),
    );
    const keyColumns = schema.primaryKey.map((name) => schema.columns.find((c) => c.name === name)!);
    // Keys are in the change stream's wire form (INT64 as text, BYTES as base64), which a key set carries.
    const [rows] = await this.database
      .table(table)
      .read(
        { keys: keys as unknown as string[][], columns: selected.map((c) => c.name) },
        at === 'latest' ? { strong: true } : { readTimestamp: preciseDateOf(at) },
      );
    const byKey = new Map<string, Record<string, WriterValue>>();
    const issues: ValueIssue[] = [];
    for (const row of rows) {
      const fields = structFields(row, 'row');
      const key = keyColumns.map((c) => clientValueToModJson(fields[c.name], c.type, c.name));
      byKey.set(JSON.stringify(key), clientRowToWriterRow(row, selected, issues));
    }
    if (issues.length > 0) this.onValueIssues?.(table, issues);
    return keys.map((k) => byKey.get(JSON.stringify(k)) ?? null);
  }
}
