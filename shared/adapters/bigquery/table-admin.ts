/**
 * Table creation and additive schema changes through the BigQuery REST client: create when missing
 * (tolerating a concurrent creator), add the columns the source gained, never change or drop one.
 */
import type { BigQuery, Table, TableField, TableMetadata } from '@google-cloud/bigquery';
import type { BigQueryField } from '../../domain/bigquery-schema';

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

/** REST reports legacy type names; the comparison uses standard SQL names. */
const STANDARD: Record<string, string> = {
  INTEGER: 'INT64',
  FLOAT: 'FLOAT64',
  BOOLEAN: 'BOOL',
  RECORD: 'STRUCT',
};

function standardType(type: string | null | undefined): string {
  const upper = (type ?? '').toUpperCase();
  return STANDARD[upper] ?? upper;
}

/**
 * Fields of `wanted` that `existing` lacks, as NULLABLE (or REPEATED) — BigQuery adds no REQUIRED column to
 * an existing table. @throws Error naming the column when an existing column has another type.
 */
export function missingFields(existing: TableField[], wanted: readonly BigQueryField[], table: string) {
  const byName = new Map(existing.map((f) => [(f.name ?? '').toLowerCase(), f]));
  const missing: BigQueryField[] = [];
  for (const field of wanted) {
    const have = byName.get(field.name.toLowerCase());
    if (!have) {
      missing.push({ ...field, mode: field.mode === 'REPEATED' ? 'REPEATED' : 'NULLABLE' });
      continue;
    }
    const repeated = (have.mode ?? 'NULLABLE').toUpperCase() === 'REPEATED';
    if (standardType(have.type) !== field.type || repeated !== (field.mode === 'REPEATED')) {
      throw new Error(
        `column ${table}.${field.name} is ${have.type}${repeated ? ' REPEATED' : ''} in BigQuery but the source maps it to ${field.type}${field.mode === 'REPEATED' ? ' REPEATED' : ''}; change the replica table by hand`,
      );
    }
  }
  return missing;
}

/** Patches the table's schema to `existing` + `added` (an additive change). */
export async function addFields(table: Table, existing: TableField[], added: BigQueryField[]): Promise<void> {
  if (added.length === 0) return;
  await table.setMetadata({ schema: { fields: [...existing, ...added] } });
}
