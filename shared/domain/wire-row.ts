/**
 * A result row in Spanner's wire form (the form change-stream mods carry: INT64 and NUMERIC as text, FLOAT as
 * a number or `"NaN"`, BYTES base64, TIMESTAMP RFC 3339, JSON as its exact text, ARRAY as a list) → writer
 * values through {@link toWriterValue}, plus the exact companions of TIMESTAMP key columns (ADR-1402). The same
 * mapping as a mod's, with nothing in between.
 */
import type { JsonValue } from './change-record';
import { DecodeError } from './client-values';
import { exactKeyColumn, exactKeyText, needsExactKey } from './exact-keys';
import type { TableColumn } from './information-schema';
import { toWriterValue, type ValueIssue, type WriterValue } from './value-mapping';

/** How one result column maps: its table column, and whether it is a TIMESTAMP key. */
export interface WireColumn {
  column: TableColumn;
  exactKey: boolean;
}

/**
 * Plans the mapping of a result's columns onto a table's columns.
 * @throws DecodeError naming a result column the table does not have.
 */
export function planWireColumns(
  names: string[],
  table: { name: string; columns: TableColumn[]; primaryKey: string[] },
): WireColumn[] {
  return names.map((name) => {
    const column = table.columns.find((c) => c.name === name);
    if (!column) throw new DecodeError(`${table.name}.${name}`, 'result column is not a column of the table');
    return { column, exactKey: needsExactKey(column.type) && table.primaryKey.includes(name) };
  });
}

/** One wire row → writer values of the planned columns. */
export function wireRowToWriterRow(
  values: readonly JsonValue[],
  plan: readonly WireColumn[],
  issues: ValueIssue[],
): Record<string, WriterValue> {
  const out: Record<string, WriterValue> = {};
  for (let i = 0; i < plan.length; i++) {
    const { column, exactKey } = plan[i] as WireColumn;
    const value = values[i] ?? null;
    out[column.name] = toWriterValue(column.name, column.type, value, issues);
    if (exactKey && value !== null) out[exactKeyColumn(column.name)] = exactKeyText(column.name, value);
  }
  return out;
}
