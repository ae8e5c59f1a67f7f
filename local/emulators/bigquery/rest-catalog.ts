/**
 * REST handlers for datasets and tables (insert, get, patch/update, list, delete), rendering resources the
 * way `@google-cloud/bigquery` expects them.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ApiError, type Catalog, type Dataset, type Table, type TableRef } from './catalog';
import { checkDefaults } from './defaults';
import { runQuery } from './query';
import { type Field, normalizeFields, restSchema, toRestFields } from './schema';

const tableBody = z
  .object({
    tableReference: z.object({ tableId: z.string().min(1) }).loose(),
    schema: restSchema.optional(),
  })
  .loose();

const PASS_THROUGH_EXCLUDED = new Set([
  'tableReference',
  'schema',
  'kind',
  'id',
  'etag',
  'selfLink',
  'numRows',
  'view',
  'type',
]);

function extraMetadata(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).filter(([k]) => !PASS_THROUGH_EXCLUDED.has(k)));
}

function parseFields(raw: unknown): Field[] {
  try {
    const fields = normalizeFields(restSchema.parse(raw ?? {}).fields);
    checkDefaults(fields);
    return fields;
  } catch (err) {
    throw new ApiError(400, 'invalid', (err as Error).message);
  }
}

/** Renders a dataset resource. */
export function datasetResource(ds: Dataset): Record<string, unknown> {
  return {
    kind: 'bigquery#dataset',
    id: `${ds.projectId}:${ds.datasetId}`,
    datasetReference: { projectId: ds.projectId, datasetId: ds.datasetId },
    location: 'US',
    creationTime: String(ds.creationTime),
    lastModifiedTime: String(ds.creationTime),
    ...ds.metadata,
  };
}

/**
 * The table's etag: it changes whenever its schema or metadata does, so a read-modify-write that sends it
 * back in `If-Match` is refused once another writer changed the table in between (see patchTable).
 */
export function tableEtag(t: Table): string {
  const content = JSON.stringify([t.schemaVersion, toRestFields(t.fields), t.metadata, t.view ?? null]);
  return `"${createHash('sha256').update(content).digest('base64url').slice(0, 16)}"`;
}

/** Renders a table resource (a view has `type: VIEW`, its query and no row count). */
export function tableResource(t: Table): Record<string, unknown> {
  const { projectId, datasetId, tableId } = t.ref;
  return {
    kind: 'bigquery#table',
    id: `${projectId}:${datasetId}.${tableId}`,
    etag: tableEtag(t),
    tableReference: { projectId, datasetId, tableId },
    schema: { fields: toRestFields(t.fields) },
    ...(t.view
      ? { view: { query: t.view.query, useLegacySql: false } }
      : { numRows: String(t.rows().length) }),
    creationTime: String(t.creationTimeMs),
    lastModifiedTime: String(Date.now()),
    type: t.view ? 'VIEW' : 'TABLE',
    location: 'US',
    ...t.metadata,
  };
}

const viewBody = z.object({
  query: z.string().min(1, 'view.query must not be empty'),
  useLegacySql: z.boolean().optional(),
});

/**
 * A view's definition, checked as BigQuery checks it at creation: GoogleSQL only (tables.insert defaults
 * `useLegacySql` to true, so it must say false), and the query must run; its result schema is the view's.
 */
function viewOf(catalog: Catalog, projectId: string, raw: unknown): { query: string; fields: Field[] } {
  const parsed = viewBody.safeParse(raw);
  if (!parsed.success) throw new ApiError(400, 'invalid', `Invalid view: ${parsed.error.issues[0]?.message}`);
  if (parsed.data.useLegacySql !== false) {
    throw new ApiError(
      400,
      'invalid',
      'The emulator supports only GoogleSQL views: set view.useLegacySql to false.',
    );
  }
  const { fields } = runQuery(catalog, projectId, parsed.data.query);
  return { query: parsed.data.query, fields };
}

/** datasets.insert */
export function insertDataset(catalog: Catalog, projectId: string, body: unknown): Record<string, unknown> {
  const parsed = z
    .object({ datasetReference: z.object({ datasetId: z.string().min(1) }).loose() })
    .loose()
    .safeParse(body);
  if (!parsed.success)
    throw new ApiError(400, 'invalid', 'Missing required field: datasetReference.datasetId');
  const { datasetReference, ...rest } = parsed.data;
  const { kind: _k, id: _i, ...metadata } = rest as Record<string, unknown>;
  return datasetResource(catalog.createDataset(projectId, datasetReference.datasetId, metadata));
}

/** tables.insert */
export function insertTable(
  catalog: Catalog,
  projectId: string,
  datasetId: string,
  body: unknown,
): Record<string, unknown> {
  const parsed = tableBody.safeParse(body);
  if (!parsed.success) throw new ApiError(400, 'invalid', 'Missing required field: tableReference.tableId');
  const record = parsed.data as Record<string, unknown>;
  const ref: TableRef = { projectId, datasetId, tableId: parsed.data.tableReference.tableId };
  if (record.view !== undefined) {
    const view = viewOf(catalog, projectId, record.view);
    return tableResource(catalog.createTable(ref, view.fields, extraMetadata(record), { query: view.query }));
  }
  const fields = parseFields(parsed.data.schema);
  checkPrimaryKey(fields, record);
  return tableResource(catalog.createTable(ref, fields, extraMetadata(record)));
}

function checkPrimaryKey(fields: Field[], body: Record<string, unknown>): void {
  const pk = (body.tableConstraints as { primaryKey?: { columns?: unknown } } | undefined)?.primaryKey
    ?.columns;
  if (pk === undefined) return;
  if (!Array.isArray(pk) || pk.length === 0 || pk.length > 16) {
    throw new ApiError(400, 'invalid', 'The primary key must have between 1 and 16 columns.');
  }
  for (const c of pk) {
    const f = fields.find((x) => x.name === c);
    if (!f) throw new ApiError(400, 'invalid', `Primary key column ${String(c)} is not in the table schema.`);
    if (f.mode === 'REPEATED' || f.type === 'STRUCT') {
      throw new ApiError(400, 'invalid', `Primary key column ${String(c)} has an unsupported type.`);
    }
  }
}

/**
 * tables.patch / tables.update: metadata merge; the schema may only gain NULLABLE or REPEATED columns. With
 * `If-Match`, the change applies only while the table still has that etag, else 412 Precondition Failed, as
 * BigQuery answers a read-modify-write that lost a race
 * (https://cloud.google.com/bigquery/docs/api-performance#read-patch-write).
 */
export function patchTable(table: Table, body: unknown, ifMatch?: string): Record<string, unknown> {
  if (ifMatch !== undefined && ifMatch !== '*' && ifMatch !== tableEtag(table))
    throw new ApiError(412, 'conditionNotMet', 'Precondition check failed.');
  const record = (body ?? {}) as Record<string, unknown>;
  if (table.view && (record.schema !== undefined || record.view !== undefined)) {
    throw new ApiError(400, 'invalid', 'The emulator cannot change the definition of a view.');
  }
  if (record.schema !== undefined) {
    const next = parseFields(record.schema);
    checkSchemaEvolution(table.fields, next, '');
    const changed = JSON.stringify(shape(next)) !== JSON.stringify(shape(table.fields));
    table.fields = next;
    if (changed) table.schemaVersion++;
  }
  Object.assign(table.metadata, extraMetadata(record));
  return tableResource(table);
}

/** What a schema means for writers (names, types, modes), without how the client spelled it. */
function shape(fields: Field[]): unknown {
  return fields.map((f) => [f.name, f.type, f.mode, f.fields ? shape(f.fields) : null]);
}

function checkSchemaEvolution(before: Field[], after: Field[], prefix: string): void {
  for (const old of before) {
    const now = after.find((f) => f.name === old.name);
    if (!now)
      throw new ApiError(
        400,
        'invalid',
        `Provided Schema does not match Table. Field ${prefix}${old.name} is missing in new schema`,
      );
    if (now.type !== old.type) {
      throw new ApiError(
        400,
        'invalid',
        `Provided Schema does not match Table. Field ${prefix}${old.name} has changed type from ${old.type} to ${now.type}`,
      );
    }
    if (now.mode !== old.mode && !(old.mode === 'REQUIRED' && now.mode === 'NULLABLE')) {
      throw new ApiError(
        400,
        'invalid',
        `Provided Schema does not match Table. Field ${prefix}${old.name} has changed mode from ${old.mode} to ${now.mode}`,
      );
    }
    if (old.fields) checkSchemaEvolution(old.fields, now.fields ?? [], `${prefix}${old.name}.`);
  }
  for (const f of after) {
    if (!before.some((o) => o.name === f.name) && f.mode === 'REQUIRED') {
      throw new ApiError(
        400,
        'invalid',
        `Provided Schema does not match Table. Cannot add required field ${prefix}${f.name} to an existing schema.`,
      );
    }
  }
}

/** tables.list */
export function listTables(catalog: Catalog, projectId: string, datasetId: string): Record<string, unknown> {
  const tables = [...catalog.dataset(projectId, datasetId).tables.values()];
  return {
    kind: 'bigquery#tableList',
    totalItems: tables.length,
    tables: tables.map((t) => ({
      kind: 'bigquery#table',
      id: `${projectId}:${datasetId}.${t.ref.tableId}`,
      tableReference: t.ref,
      type: t.view ? 'VIEW' : 'TABLE',
      creationTime: String(t.creationTimeMs),
    })),
  };
}
