/**
 * The one DDL statement the emulator runs through jobs.query: `ALTER TABLE t ALTER COLUMN c SET DATA TYPE T`,
 * with BigQuery's in-place coercions (INT64 → NUMERIC / BIGNUMERIC / FLOAT64, NUMERIC → BIGNUMERIC / FLOAT64,
 * BIGNUMERIC → FLOAT64). Stored values are converted; other changes fail as BigQuery refuses them.
 */
import type { Catalog, Table } from './catalog';
import type { QueryResult } from './query';
import { invalidQuery } from './sql-parse';
import type { Row } from './values';

const COERCIONS: Record<string, string[]> = {
  INT64: ['NUMERIC', 'BIGNUMERIC', 'FLOAT64'],
  NUMERIC: ['BIGNUMERIC', 'FLOAT64'],
  BIGNUMERIC: ['FLOAT64'],
};

const ALTER =
  /^\s*ALTER\s+TABLE\s+`?([\w.-]+)`?\s+ALTER\s+COLUMN\s+`?(\w+)`?\s+SET\s+DATA\s+TYPE\s+(\w+)\s*;?\s*$/i;

function convert(value: Row[string], to: string): Row[string] {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.map((v) => convert(v, to));
  if (to === 'FLOAT64') return Number(value);
  return typeof value === 'bigint' ? value.toString() : value;
}

/** Changes a column's type in place, converting its stored values (also replayed by persistence). */
export function changeColumnType(table: Table, column: string, to: string): void {
  const field = table.fields.find((f) => f.name === column);
  if (!field) return;
  table.state.convertColumn(field.name, (v) => convert(v, to));
  field.type = to;
  table.schemaVersion++;
}

/** Runs the statement when `sql` is one; undefined when it is not DDL (the caller runs it as a query). */
export function runDdl(catalog: Catalog, defaultProject: string, sql: string): QueryResult | undefined {
  if (!/^\s*ALTER\s+TABLE\b/i.test(sql)) return undefined;
  const m = ALTER.exec(sql);
  if (!m) throw invalidQuery('The emulator runs only ALTER TABLE … ALTER COLUMN … SET DATA TYPE');
  const parts = (m[1] as string).split('.');
  const path = parts.length === 2 ? [defaultProject, ...parts] : parts;
  if (path.length !== 3) throw invalidQuery(`Table name "${m[1]}" missing dataset`);
  const table = catalog.table({ projectId: path[0]!, datasetId: path[1]!, tableId: path[2]! });
  const field = table.fields.find((f) => f.name.toLowerCase() === (m[2] as string).toLowerCase());
  if (!field) throw invalidQuery(`Column ${m[2]} not found in table ${m[1]}`);
  const to = (m[3] as string).toUpperCase();
  if (field.type !== to) {
    if (!COERCIONS[field.type]?.includes(to))
      throw invalidQuery(
        `ALTER TABLE ALTER COLUMN SET DATA TYPE requires that the existing column type (${field.type}) is assignable to the new type (${to})`,
      );
    changeColumnType(table, field.name, to);
    catalog.columnTypeChanged(table, field.name, to);
  }
  return { fields: [], rows: [] };
}
