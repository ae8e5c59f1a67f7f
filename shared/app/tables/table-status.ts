/**
 * The scheduler's view of what is replicated, refreshed every tick from one read of the whole catalog: every
 * table the stream watches is planned and its BigQuery tables are created or gain columns (a table created
 * later is found here even before its first record), and `GET /status` lists each source table with its
 * replica and history names, its replicated column count and its state — a watched table `SLUICE_TABLES`
 * leaves out is listed too, and a table dropped from Spanner keeps its entry (its BigQuery tables are kept).
 */
import type { PipelineConfig } from '../../domain/config';
import { SluiceError } from '../../domain/errors';
import type { ChangeStreamScope, TableSchema } from '../../domain/information-schema';
import type { Logger } from '../../domain/log';
import { missingTableNamed } from '../../domain/missing-table';
import { destinationClashesOf, notReplicatedReason, targetsFor } from '../../domain/table-rules';
import type { SpannerCatalog } from '../../ports/spanner-catalog';
import { type TableRegistry, watchedColumns } from './table-registry';
import type { TableStatus } from './table-state';

export { previousTables } from './table-markers';
export type { TableStatus } from './table-state';

function statusOf(schema: TableSchema, config: PipelineConfig): TableStatus {
  const targets = targetsFor(config, schema.name);
  return {
    source: schema.name,
    replica: targets?.replica ?? null,
    history: targets?.history ?? null,
    columns: 0,
    state: 'not-replicated',
  };
}

/** The tables of `schemas` the stream watches, with their watched columns. */
function watchedSchemas(schemas: TableSchema[], scope: ChangeStreamScope) {
  return schemas.flatMap((schema) => {
    const watched = watchedColumns(scope, schema.name);
    return watched === undefined ? [] : [{ schema, watched }];
  });
}

/**
 * Plans and ensures every watched table and returns the status list. A table that cannot be made ready is
 * reported as `failing` (the readers fail on it when they reach its records); nothing here stops the tick.
 */
export async function syncTables(args: {
  catalog: SpannerCatalog;
  registry: TableRegistry;
  config: PipelineConfig;
  scope: ChangeStreamScope;
  previous: TableStatus[];
  log: Logger;
}): Promise<TableStatus[]> {
  const { config, registry } = args;
  const schemas = await args.catalog.tableSchemas();
  const out: TableStatus[] = [];
  const watchedList = watchedSchemas(schemas, args.scope);
  const names = watchedList.map((w) => w.schema.name);
  for (const { schema, watched } of watchedList) {
    const entry = statusOf(schema, config);
    try {
      const clashes = destinationClashesOf(config, schema.name, names);
      if (clashes.length > 0) throw new SluiceError('permanent', clashes.join('; '));
      const table = await registry.adopt(schema, watched);
      if (table) Object.assign(entry, { state: 'replicating', columns: table.plan.columns.size });
      else entry.reason = notReplicatedReason(config, schema.name);
    } catch (err) {
      const e = SluiceError.from(err, `table ${schema.name}`);
      Object.assign(entry, { state: 'failing', reason: e.message });
      args.log.error('table.failing', e, { table: schema.name });
    }
    out.push(entry);
  }
  const present = new Set(schemas.map((s) => s.name));
  const known = [...args.previous, ...Object.keys(config.tables).map((source) => ({ source }))];
  for (const p of known) {
    if (present.has(p.source) || out.some((t) => t.source === p.source)) continue;
    const targets = targetsFor(config, p.source);
    if (!targets) continue;
    out.push({
      source: p.source,
      replica: targets.replica ?? null,
      history: targets.history ?? null,
      columns: 'columns' in p ? (p as TableStatus).columns : 0,
      state: 'dropped',
      reason:
        'not in Spanner (dropped, or not created yet); its BigQuery tables, if any, are kept as they are',
    });
  }
  return out.sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : 0));
}

/**
 * The status list with each table a partition failed on as missing shown `failing`, with that error as its
 * reason. An instance that ensured a table before does not ensure it again, so without this its list would
 * go on saying `replicating` while the readers refuse the deleted table; a fresh instance finds it itself.
 * Tables are matched by their name in the dataset (one pipeline writes one dataset).
 */
export function withMissingTables(
  tables: TableStatus[],
  errors: ReadonlyArray<{ message: string }>,
): TableStatus[] {
  const missing = new Map<string, string>();
  for (const e of errors) {
    const named = missingTableNamed(e.message);
    if (!named) continue;
    const key = `${named.target} ${named.table.slice(named.table.lastIndexOf('.') + 1)}`;
    if (!missing.has(key)) missing.set(key, e.message);
  }
  if (missing.size === 0) return tables;
  return tables.map((t) => {
    if (t.state !== 'replicating') return t;
    const reason =
      (t.replica !== null ? missing.get(`replica ${t.replica}`) : undefined) ??
      (t.history !== null ? missing.get(`history ${t.history}`) : undefined);
    return reason === undefined ? t : { ...t, state: 'failing', reason };
  });
}
