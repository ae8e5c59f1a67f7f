/**
 * Table creation and additive schema changes through the BigQuery REST client: create when missing
 * (tolerating a concurrent creator), add the columns the source gained, never change or drop one.
 */
import type { BigQuery, Table, TableField, TableMetadata } from '@google-cloud/bigquery';
import type { BigQueryField } from '../../domain/bigquery-schema';
import { SluiceError } from '../../domain/errors';
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

/** The table's fields and etag, or undefined when the table does not exist. */
export async function readSchema(table: Table): Promise<{ fields: TableField[]; etag?: string } | undefined> {
  try {
    const [metadata] = await table.getMetadata();
    const m = metadata as TableMetadata;
    const fields = (m.schema as { fields?: TableField[] } | undefined)?.fields ?? [];
    return typeof m.etag === 'string' ? { fields, etag: m.etag } : { fields };
  } catch (err) {
    if (httpCode(err) === 404) return undefined;
    throw err;
  }
}

/** How often a schema patch that lost a race is planned again from a fresh read before it gives up. */
const PATCH_ATTEMPTS = 5;

/**
 * Adds to the table the fields `plan` finds missing from its current ones, as a read-modify-write guarded by
 * the table's etag (the client sends it as `If-Match`): a patch replaces the whole field list, so one planned
 * on fields another instance has changed since is refused with 412 and planned again from a fresh read —
 * both instances' columns end up in the table, and neither fails
 * (https://cloud.google.com/bigquery/docs/api-performance#read-patch-write). `plan` may change the table
 * itself (a DDL widening) and return `again` to have it read afresh. @throws SluiceError (`retryable`) after
 * {@link PATCH_ATTEMPTS} lost races.
 */
export async function addFieldsGuarded(
  table: Table,
  plan: (existing: TableField[]) => Promise<BigQueryField[] | 'again'>,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const current = (await readSchema(table)) ?? { fields: [] };
    const added = await plan(current.fields);
    if (added === 'again') {
      if (attempt < PATCH_ATTEMPTS) continue;
      throw new SluiceError(
        'retryable',
        `the schema of table ${table.id} kept changing while it was evolved`,
      );
    }
    if (added.length === 0) return;
    try {
      const guard = current.etag ? { etag: current.etag } : {};
      await table.setMetadata({ schema: { fields: [...current.fields, ...added] }, ...guard });
      return;
    } catch (err) {
      if (httpCode(err) !== 412) throw err;
      // Not a `conflict` (the window would end as another reader's no-op): the window is retried.
      if (attempt >= PATCH_ATTEMPTS)
        throw new SluiceError(
          'retryable',
          `the schema of table ${table.id} kept changing while it was evolved`,
          {
            cause: err,
          },
        );
    }
  }
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
