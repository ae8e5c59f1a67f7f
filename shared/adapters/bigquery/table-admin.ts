/**
 * Table creation and additive schema changes through the BigQuery REST client: create when missing
 * (tolerating a concurrent creator), add the columns the source gained, never change or drop one.
 */
import type { BigQuery, Table, TableField, TableMetadata } from '@google-cloud/bigquery';
import type { BigQueryField } from '../../domain/bigquery-schema';
import type { FieldPlan } from '../../domain/type-changes';

/** Where a sink's tables live. */
export interface DatasetRef {
  projectId: string;
  dataset: string;
}

/** The Storage Write path of a table: `projects/p/datasets/d/tables/t`. */
export function tablePath(ref: DatasetRef, table: string): string {
  return `projects/${ref.projectId}/datasets/${ref.dataset}/tables/${table}`;
}

function httpCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** The table's fields, or undefined when the table does not exist. */
export async function readFields(table: Table): Promise<TableField[] | undefined> {
  try {
    const [metadata] = await table.getMetadata();
    return ((metadata as TableMetadata).schema as { fields?: TableField[] } | undefined)?.fields ?? [];
  } catch (err) {
    if (httpCode(err) === 404) return undefined;
    throw err;
  }
}

/** Creates the table; a 409 (another instance created it first) counts as success. */
export async function createTable(bigquery: BigQuery, ref: DatasetRef, id: string, metadata: TableMetadata) {
  try {
    await bigquery.dataset(ref.dataset, { projectId: ref.projectId }).createTable(id, metadata);
  } catch (err) {
    if (httpCode(err) !== 409) throw err;
  }
}

/** Patches the table's schema to `existing` + `added` (an additive change). */
export async function addFields(table: Table, existing: TableField[], added: BigQueryField[]): Promise<void> {
  if (added.length === 0) return;
  await table.setMetadata({ schema: { fields: [...existing, ...added] } });
}

/** Widens columns in place with DDL (tables.patch cannot change a type). */
export async function widenFields(
  bigquery: BigQuery,
  ref: DatasetRef,
  id: string,
  widen: FieldPlan['widen'],
): Promise<void> {
  for (const w of widen) {
    const sql = `ALTER TABLE \`${ref.projectId}.${ref.dataset}.${id}\` ALTER COLUMN \`${w.name}\` SET DATA TYPE ${w.to}`;
    await bigquery.query({ query: sql });
  }
}
